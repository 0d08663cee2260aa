"""Where a piece of context came from (C33). A leaf module: the engine, the tools, the LLM layer
and the retrieval layer all speak of sources, and none of them should import another for it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

# The document of a source that a tool of an MCP server gave: `mcp:<server>`, the server's tool
# as its heading. No file holds it: its text is the context of the round that called the tool.
MCP_DOCUMENT_PREFIX = "mcp:"


@dataclass(frozen=True)
class Source:
    """Where a piece of context came from (C33): a document and a page, or a table row."""

    document: str
    page: int | None = None
    title: str | None = None
    heading: str | None = None
    # a page of several sections (a small one merged with the next): each one's heading, in
    # order, `heading` the last; None for a page of one section
    headings: tuple[str, ...] | None = None

    def to_json(self) -> dict[str, Any]:
        data = {k: v for k, v in self.__dict__.items() if v is not None}
        if self.headings is not None:
            data["headings"] = list(self.headings)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Source:
        headings = data.get("headings")
        return cls(**{**data, "headings": tuple(headings) if headings is not None else None})


def unique_sources(sources: Iterable[Source]) -> tuple[Source, ...]:
    """Each source once, in the order first given (C33: a result or an answer lists the
    document it drew on once, however many of its passages came from it)."""
    return tuple(dict.fromkeys(sources))
