"""Whether a model's reply can be used, and what to send back when it cannot: a reply is
checked against the JSON Schema its purpose asks for (runner.llm.structured), or, where text is
the answer, for saying something besides its citations; an unusable one is answered with a
correction and asked again (runner.llm.client retries it)."""

from __future__ import annotations

from typing import Any

from runner.llm import structured
from runner.llm.citations import uncited
from runner.llm.types import LLMRequest, Purpose

# The purposes sent numbered passages, whose replies' `[n]` markers become citations
# (runner.llm.passages.cited_answer). A prompt tool's reply is its own text: `[2, 5]` may be all
# it was asked for.
CITING_PURPOSES = frozenset({Purpose.ANSWER, Purpose.COMPOSE})


class EmptyReply(structured.InvalidReply):
    """A reply with no text where text is the answer (`answer`, `compose`, a prompt tool)."""

    correction = "\n\nYour previous reply was empty. Reply to the request above."


class CitationsOnly(EmptyReply):
    """A reply of citations and nothing else: SmolLM2-135M answered a question with `[4]`,
    which became an empty answer once its marker was rewritten as a citation."""

    correction = (
        "\n\nYour previous reply held citations and no answer. Reply with the answer in words, "
        "citing the passages it comes from."
    )


class NothingLeft(EmptyReply):
    """A degenerate reply (runner.llm.degenerate) with nothing left once its repeats and its
    echo are cut: a model that echoed the correction it was sent, word for word."""

    def __init__(self, detail: str, correction: str) -> None:
        super().__init__(f"{detail}; nothing was left once that was cut")
        self.correction = correction


def says_something(text: str, request: LLMRequest) -> bool:
    """Whether a text reply to `request` says anything: besides its citations, where its
    purpose cites."""
    if request.purpose in CITING_PURPOSES:
        return any(char.isalnum() for char in uncited(text))
    return bool(text.strip())


def usable(text: str, request: LLMRequest) -> Any:
    """The reply's validated data (None without a schema). Raises InvalidReply."""
    if request.schema is not None:
        return structured.parse(text, request.schema)
    if not text.strip():
        raise EmptyReply("the reply was empty")
    if not says_something(text, request):
        raise CitationsOnly("the reply held citations and nothing else")
    return None


def correction(error: structured.InvalidReply, request: LLMRequest) -> str:
    """What is appended to the prompt when it is asked again after an unusable reply."""
    if request.schema is not None:
        return structured.correction(error, request.schema)
    assert isinstance(error, EmptyReply), "a text reply is only ever unusable for being empty"
    return error.correction


def excerpt(text: str, limit: int = 300) -> str:
    """An unusable reply as an error quotes it: its first `limit` characters."""
    flat = text.strip()
    return repr(flat if len(flat) <= limit else flat[:limit] + "…")
