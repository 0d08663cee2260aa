// Draw mermaid graphs, on a full load and after htmx swaps a page in.
function drawGraphs() {
  if (typeof mermaid === "undefined") return;
  mermaid.initialize({ startOnLoad: false, securityLevel: "strict", theme: "neutral" });
  mermaid.run({ querySelector: "pre.mermaid:not([data-processed])" });
}
document.addEventListener("DOMContentLoaded", drawGraphs);
document.addEventListener("htmx:afterSettle", drawGraphs);
