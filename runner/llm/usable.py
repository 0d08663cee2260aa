"""Whether a model's reply can be used, and what to send back when it cannot: a reply is
checked against the JSON Schema its purpose asks for (runner.llm.structured), or, where text is
the answer, for having any; an unusable one is answered with a correction and asked again
(runner.llm.client retries it)."""

from __future__ import annotations

from typing import Any

from runner.llm import structured
from runner.llm.types import LLMRequest


class EmptyReply(structured.InvalidReply):
    """A reply with no text where text is the answer (`answer`, `compose`, a prompt tool)."""


def usable(text: str, request: LLMRequest) -> Any:
    """The reply's validated data (None without a schema). Raises InvalidReply."""
    if request.schema is not None:
        return structured.parse(text, request.schema)
    if not text.strip():
        raise EmptyReply("the reply was empty")
    return None


def correction(error: structured.InvalidReply, request: LLMRequest) -> str:
    """What is appended to the prompt when it is asked again after an unusable reply."""
    if request.schema is not None:
        return structured.correction(error, request.schema)
    return "\n\nYour previous reply was empty. Reply to the request above."


def excerpt(text: str, limit: int = 300) -> str:
    """An unusable reply as an error quotes it: its first `limit` characters."""
    flat = text.strip()
    return repr(flat if len(flat) <= limit else flat[:limit] + "…")
