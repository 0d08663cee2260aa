"""A JSON Schema as a short outline for a prompt: the `schema_outline` template filter.

An extraction prompt must tell the model which keys to reply with, of which type, and what each
means. The JSON Schema itself says that in three to four times the tokens (every quote, brace and
colon of it is a token), so the default `decompose` and `extract` templates show this outline
instead; the reply is still validated against the schema itself (and asked again with the
validation error when it fails):

    - parts: list of objects — One question per part; each with:
      - tool: one of library_docs, tutorial_docs — Which docs answer it
      - question: text
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

_TYPE_NAMES = {
    "string": "text",
    "integer": "whole number",
    "number": "number",
    "boolean": "true or false",
    "null": "nothing",
    "object": "object",
    "array": "list",
}


def schema_outline(schema: Mapping[str, Any]) -> str:
    """One line per property (nested ones indented): its name, its type, its description."""
    lines: list[str] = []
    _properties(schema, 0, lines)
    return "\n".join(lines)


def _properties(schema: Mapping[str, Any], depth: int, lines: list[str]) -> None:
    for name, prop in (schema.get("properties") or {}).items():
        if not isinstance(prop, Mapping):
            continue
        line = f"{'  ' * depth}- {name}: {_kind(prop)}"
        description = str(prop.get("description") or "").strip()
        if description:
            line += f" — {description}"
        nested = _nested(prop)
        if nested is None:
            lines.append(line)
            continue
        lines.append(line + ("; each with:" if nested is prop.get("items") else ", with:"))
        _properties(nested, depth + 1, lines)


def _nested(prop: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The object schema whose properties are listed under this one, if any."""
    if prop.get("properties"):
        return prop
    items = prop.get("items")
    if isinstance(items, Mapping) and items.get("properties"):
        return items
    return None


def _kind(prop: Mapping[str, Any]) -> str:
    if "enum" in prop:
        return "one of " + ", ".join(_value(value) for value in prop["enum"])
    if "const" in prop:
        return f"always {_value(prop['const'])}"
    kind = prop.get("type")
    if kind == "array":
        items = prop.get("items")
        if not isinstance(items, Mapping):
            return "list"
        if items.get("properties"):
            return "list of objects"
        return f"list of {_kind(items)}"
    if isinstance(kind, list):
        return " or ".join(_TYPE_NAMES.get(str(each), str(each)) for each in kind)
    return _TYPE_NAMES.get(str(kind), "any value")


def _value(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)
