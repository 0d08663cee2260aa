// The playground's few lines of JavaScript; every page works without them.

// Draw mermaid graphs (the health page loads mermaid), on a full load and after htmx swaps.
function drawGraphs() {
  if (typeof mermaid === "undefined") return;
  mermaid.initialize({ startOnLoad: false, securityLevel: "strict", theme: "neutral" });
  mermaid.run({ querySelector: "pre.mermaid:not([data-processed])" });
}

// After htmx swapped in a page, show the part its address names (#round-3), or on the chat
// the newest round: what a full page load with the redirect's #round-N would show.
function showTarget() {
  const named = location.hash && document.getElementById(location.hash.slice(1));
  const rounds = document.querySelectorAll(".conversation > .round");
  const target = named || rounds[rounds.length - 1];
  if (target) target.scrollIntoView({ block: "start" });
}

// Ctrl+Enter (or Cmd+Enter) in a message sends it, as Enter would in a one-line field.
document.addEventListener("keydown", (event) => {
  const field = event.target;
  if (event.key === "Enter" && (event.ctrlKey || event.metaKey) && field.form && field.tagName === "TEXTAREA" && field.id === "message") {
    event.preventDefault();
    field.form.requestSubmit();
  }
});

document.addEventListener("DOMContentLoaded", drawGraphs);
document.addEventListener("htmx:afterSettle", () => { drawGraphs(); showTarget(); });
