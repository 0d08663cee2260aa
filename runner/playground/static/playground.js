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

// The answer as the model writes it: the message form goes to say/stream, the pieces show in
// the conversation as they come, and the chat loads as after a plain send when the round ends.
// Anything amiss (an old browser, a refused request): the form is sent the plain way.
document.addEventListener("submit", (event) => {
  const form = event.target;
  if (!form.matches("form.ask") || !window.fetch || !window.TextDecoder || form.dataset.plain) return;
  event.preventDefault();
  event.stopPropagation(); // (before htmx's boost sees it)
  streamRound(form).catch(() => sendPlainly(form));
}, true);

async function streamRound(form) {
  const body = new URLSearchParams(new FormData(form));
  const response = await fetch(form.action + "/stream", { method: "POST", body });
  if (!response.ok || !response.body) throw new Error("no stream");
  const answer = liveRound(form, body.get("message"));
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error("the stream ended early");
    buffered += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffered.indexOf("\n\n")) >= 0) {
      const [name, data] = parseEvent(buffered.slice(0, end));
      buffered = buffered.slice(end + 2);
      if (name === "delta") answer.textContent += data.text;
      else if (name === "done") return showRound(data.location);
      else if (name === "error") throw new Error(data.message);
    }
  }
}

function parseEvent(text) {
  let name = "message", data = null;
  for (const line of text.split("\n")) {
    if (line.startsWith("event: ")) name = line.slice(7);
    else if (line.startsWith("data: ")) data = JSON.parse(line.slice(6));
  }
  return [name, data];
}

// The round being run, at the end of the conversation: the message, and the answer so far.
function liveRound(form, message) {
  form.classList.add("htmx-request"); // "Working on it…"
  form.querySelector("button").disabled = true;
  const round = document.createElement("li");
  round.className = "round streaming";
  round.innerHTML = '<div class="user"><span class="who">You</span><p></p></div>' +
    '<div class="assistant"><span class="who"></span><p class="answer" id="streamed-answer" aria-live="polite"></p></div>';
  round.querySelector(".user p").textContent = message;
  round.querySelector(".assistant .who").textContent = document.querySelector("h1").textContent;
  document.querySelector(".conversation").appendChild(round);
  round.scrollIntoView({ block: "start" });
  return round.querySelector("#streamed-answer");
}

// The chat at the round just run: loaded afresh, even when only its #round-N is new.
function showRound(target) {
  const next = new URL(target, location.href);
  if (next.pathname + next.search !== location.pathname + location.search) {
    return location.assign(next.href);
  }
  history.replaceState(null, "", next.href);
  location.reload();
}

function sendPlainly(form) {
  form.dataset.plain = "yes";
  form.querySelector("button").disabled = false;
  form.requestSubmit();
}

document.addEventListener("DOMContentLoaded", drawGraphs);
document.addEventListener("htmx:afterSettle", () => { drawGraphs(); showTarget(); });
