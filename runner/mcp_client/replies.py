"""What runner reads of an MCP server's answers: its tools as listed, and a tool's result as
text (the context it becomes) with its structured content kept as data."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

# the most of a tool's text that becomes context (and is stored with the session): more would
# only be cut again to fit the model's window
MAX_TEXT_CHARS = 100_000


@dataclass(frozen=True)
class ServerTool:
    """A tool as the server lists it."""

    name: str
    description: str
    input_schema: dict[str, Any] = field(default_factory=dict)
    output_schema: dict[str, Any] | None = None

    @classmethod
    def of(cls, listed: Any) -> ServerTool:
        return cls(
            name=listed.name,
            description=listed.description or "",
            input_schema=dict(listed.input_schema or {}),
            output_schema=dict(listed.output_schema) if listed.output_schema else None,
        )


@dataclass(frozen=True)
class ToolReply:
    """A tool's result: its content as text, its `structuredContent`, whether it is an error."""

    text: str
    data: Any = None
    is_error: bool = False

    @classmethod
    def of(cls, result: Any) -> ToolReply:
        parts = [_text_of(block) for block in result.content or ()]
        text = "\n".join(part for part in parts if part).strip()
        data = result.structured_content
        if not text and data is not None:  # a tool that answers with data only
            text = json.dumps(data, ensure_ascii=False, sort_keys=True)
        if len(text) > MAX_TEXT_CHARS:  # a server's answer is not trusted to be reasonable
            text = f"{text[:MAX_TEXT_CHARS]}\n[cut: the tool answered {len(text):,} characters]"
        return cls(text, data, bool(result.is_error))


def _text_of(block: Any) -> str:
    """One content block as text: text as it is, an embedded text resource's text, and a line
    naming what cannot be text (an image, audio, binary data, a link)."""
    kind = getattr(block, "type", "")
    if kind == "text":
        return str(block.text)
    if kind == "resource":
        resource = block.resource
        text = getattr(resource, "text", None)
        if text is not None:
            return str(text)
        return f"[binary resource {resource.uri} ({resource.mime_type or 'unknown type'})]"
    if kind == "resource_link":
        return f"[resource {block.name}: {block.uri}]"
    if kind in ("image", "audio"):
        return f"[{kind} ({block.mime_type})]"
    return f"[{kind or 'unknown'} content]"
