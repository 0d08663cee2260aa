"""The final answer, shown as it is written.

A face that shows the answer while the model writes it hands the round a watch
(`runner.app.RoundWatch`, `Conversation.say(watch=...)`), whose `on_delta` — a function taking
each new piece of text — the round's LLM client carries (`runner.llm.bound.TaskClient.stream`),
and so every client the round hands a tool or a purpose. Only requests marked
`streams` (the `answer` purpose, and a prompt tool whose output is the terminal answer) are
streamed, and only by a provider that can (`stream`); the others answer as before, and the face
shows what the stream did not carry when the round ends (`runner.render.rest_of`).

What a stream carries is the answer as the round will return it: leading and trailing blanks
dropped, as the reply is stripped, and the `answer` purpose's `[n]` markers rewritten as
runner's citations (`AnswerStream` with `cited_answer`), a marker held back until it is whole.
"""

from __future__ import annotations

from collections.abc import Callable

Deltas = Callable[[str], None]  # given each piece of a reply's text as it arrives


class AnswerStream:
    """The pieces of a reply, passed on as the round will return the reply: stripped, and each
    piece through `rewrite` (the citation markers' rewriting), cut where no marker can span the
    cut (`safe_end`). Call `close` when the reply is complete."""

    def __init__(self, on_delta: Deltas, rewrite: Callable[[str], str] | None = None) -> None:
        self._on_delta = on_delta
        self._rewrite = rewrite or (lambda text: text)
        self._held = ""
        self._started = False

    def __call__(self, delta: str) -> None:
        self._held += delta
        if not self._started:
            self._held = self._held.lstrip()
        end = safe_end(self._held)
        if end:
            self._send(self._held[:end])
            self._held = self._held[end:]

    def close(self) -> None:
        if not self._started:
            self._held = self._held.lstrip()
        rest = self._held.rstrip()
        self._held = ""
        if rest:
            self._send(rest)

    def _send(self, text: str) -> None:
        self._started = True
        written = self._rewrite(text)
        if written:
            self._on_delta(written)


def safe_end(text: str) -> int:
    """How much of `text` can be sent now: all but the word being written and the blanks
    before it (what follows decides whether they end the reply, or start a citation marker),
    and nothing from a `[` that is not closed yet."""
    end = len(text)
    while True:
        opened = text.rfind("[", 0, end)
        if opened != -1 and "]" not in text[opened:end]:
            end = opened  # (a marker may hold blanks: `[1, 2]`)
        while end > 0 and not text[end - 1].isspace():
            end -= 1
        while end > 0 and text[end - 1].isspace():
            end -= 1
        opened = text.rfind("[", 0, end)
        if opened == -1 or "]" in text[opened:end]:
            return end
