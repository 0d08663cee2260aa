"""Structured replies: find the JSON in a model's reply and check it against a JSON Schema.

Models wrap JSON in ```json fences or in prose; we take the first fenced block that parses, else
the first balanced `{…}` or `[…]`. Only `json.loads` ever reads a reply: nothing in it is
evaluated as code.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

_FENCE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\n?(.*?)```", re.DOTALL)
_CLOSERS = {"{": "}", "[": "]"}


class InvalidReply(ValueError):
    """The reply holds no JSON, or JSON that does not meet the schema."""


def find_json(text: str) -> Any:
    """The first JSON value in `text`. Raises InvalidReply when there is none."""
    for match in _FENCE.finditer(text):
        try:
            return json.loads(match.group(1))
        except json.JSONDecodeError:
            continue
    for start, char in enumerate(text):
        if char in _CLOSERS:
            candidate = _balanced(text, start)
            if candidate is None:
                continue
            try:
                return json.loads(candidate)
            except json.JSONDecodeError:
                continue
    stripped = text.strip()
    try:
        return json.loads(stripped)  # a bare scalar such as `true`
    except json.JSONDecodeError:
        excerpt = stripped[:120] + ("…" if len(stripped) > 120 else "")
        raise InvalidReply(f"no JSON found in the reply {excerpt!r}") from None


def _balanced(text: str, start: int) -> str | None:
    """The bracketed span starting at `start`, honouring strings; None if it never closes."""
    stack: list[str] = []
    in_string = escaped = False
    for index in range(start, len(text)):
        char = text[index]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in _CLOSERS:
            stack.append(_CLOSERS[char])
        elif char in "}]":
            if not stack or stack.pop() != char:
                return None
            if not stack:
                return text[start : index + 1]
    return None


def validate(data: Any, schema: Mapping[str, Any]) -> None:
    """Raises InvalidReply naming the first (most relevant) violation."""
    error = best_match(Draft202012Validator(schema).iter_errors(data))
    if error is not None:
        place = "/".join(str(part) for part in error.absolute_path) or "the reply"
        raise InvalidReply(f"at {place}: {error.message}")


def parse(text: str, schema: Mapping[str, Any]) -> Any:
    """The validated JSON of a reply. Raises InvalidReply."""
    data = find_json(text)
    validate(data, schema)
    return data


def correction(error: InvalidReply, schema: Mapping[str, Any]) -> str:
    """What a retried prompt gets appended: the error, and the shape we need."""
    return (
        f"\n\nYour previous reply could not be used: {error}\n"
        "Reply again with only a JSON value that meets this JSON Schema, and nothing else:\n"
        f"{json.dumps(schema, ensure_ascii=False)}"
    )
