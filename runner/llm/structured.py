"""Structured replies: find the JSON in a model's reply and check it against a JSON Schema.

Models wrap JSON in ```json fences or in prose; we try each fenced block, then each balanced
`{…}` or `[…]`, then the whole reply, and take the first value that meets the schema. Small
models also answer a yes/no question with a bare word: where the schema asks for exactly one
boolean (a single-tool suitability, the gatekeeper's `enough`, a page's `found`), `true`,
`false`, `yes` or `no` — with an optional sentence after it — is that boolean. A reply that
is the JSON Schema itself (an echo) is recognised, so that the re-ask can say so. Only
`json.loads` ever reads a reply: nothing in it is evaluated as code.
"""

from __future__ import annotations

import contextlib
import functools
import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

_FENCE = re.compile(r"```[ \t]*(?:json|JSON)?[ \t]*\n?(.*?)```", re.DOTALL)
_CLOSERS = {"{": "}", "[": "]"}
# "No.", "yes, it does", "FALSE - the pages say nothing about the price"
_BARE_WORD = re.compile(r"^\W*(true|false|yes|no)\b[\s.,;:!\-–—]*(.*)$", re.IGNORECASE | re.DOTALL)
_TRUTH = {"true": True, "yes": True, "false": False, "no": False}
_SCHEMA_WORDS = frozenset({"$schema", "properties", "required", "additionalProperties", "items"})
_SCHEMA_TYPES = frozenset({"object", "array", "string", "boolean", "integer", "number", "null"})


class InvalidReply(ValueError):
    """The reply holds no JSON, or JSON that does not meet the schema."""


class EchoedSchema(InvalidReply):
    """The reply is the JSON Schema it was asked to meet, not a value meeting it."""


def candidates(text: str) -> Iterator[Any]:
    """Every JSON value in `text`, in the order a reader meets them: fenced blocks first."""
    for match in _FENCE.finditer(text):
        try:
            yield json.loads(match.group(1))
        except json.JSONDecodeError:
            continue
    start = 0
    while start < len(text):
        candidate = _balanced(text, start) if text[start] in _CLOSERS else None
        if candidate is not None:
            try:
                value = json.loads(candidate)
            except json.JSONDecodeError:
                pass
            else:
                yield value
                start += len(candidate)  # not the values nested inside this one
                continue
        start += 1
    with contextlib.suppress(json.JSONDecodeError):
        yield json.loads(text.strip())  # a bare scalar such as `true`


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
    checker = _checker(json.dumps(schema, sort_keys=True))
    if checker.is_valid(data):
        return
    from jsonschema.exceptions import best_match

    error = best_match(checker.iter_errors(data))
    if error is not None:
        place = "/".join(str(part) for part in error.absolute_path) or "the reply"
        raise InvalidReply(f"at {place}: {error.message}")


@functools.lru_cache(maxsize=256)
def _checker(schema: str) -> Any:
    """The validator of a schema (its JSON text): a round checks the same few schemas again
    and again, and building a validator cost more than using it."""
    # jsonschema (about 0.1 s to import) only when a structured reply is checked: a round that
    # asks for none, such as an offline retrieval round, never pays for it
    from jsonschema import Draft202012Validator

    return Draft202012Validator(json.loads(schema))


def parse(text: str, schema: Mapping[str, Any]) -> Any:
    """The validated JSON of a reply: the first JSON value in it that meets the schema, else
    the bare yes/no word where the schema asks for one boolean. Raises InvalidReply (about the
    first value found), or EchoedSchema when the reply is a JSON Schema."""
    first_error: InvalidReply | None = None
    for value in candidates(text):
        try:
            validate(value, schema)
        except InvalidReply as error:
            if first_error is None:
                first_error = _echo(value, schema) or error
            continue
        return value
    bare = bare_boolean(text, schema)
    if bare is not None:
        return bare
    if first_error is not None:
        raise first_error
    raise InvalidReply(f"no JSON found in the reply {_excerpt(text)}")


def bare_boolean(text: str, schema: Mapping[str, Any]) -> dict[str, Any] | None:
    """`{"<the boolean>": …}` for a reply that is a bare yes/no word, where the schema is an
    object whose only required property is a boolean; the sentence after the word goes into
    the schema's one string property, when it has exactly one. None otherwise."""
    name = _only_boolean(schema)
    match = _BARE_WORD.match(text.strip())
    if name is None or match is None:
        return None
    data: dict[str, Any] = {name: _TRUTH[match[1].lower()]}
    properties = schema.get("properties", {})
    strings = [key for key, spec in properties.items() if _type_of(spec) == "string"]
    rest = match[2].strip()
    if rest and len(strings) == 1:
        data[strings[0]] = rest
    try:
        validate(data, schema)
    except InvalidReply:
        return None
    return data


def _only_boolean(schema: Mapping[str, Any]) -> str | None:
    properties = schema.get("properties")
    required = schema.get("required") or []
    if schema.get("type") != "object" or not isinstance(properties, Mapping) or len(required) != 1:
        return None
    name = required[0]
    spec = properties.get(name)
    return name if isinstance(spec, Mapping) and _type_of(spec) == "boolean" else None


def _type_of(spec: Any) -> Any:
    return spec.get("type") if isinstance(spec, Mapping) else None


def is_schema_echo(value: Any, schema: Mapping[str, Any]) -> bool:
    """Whether a reply value is a JSON Schema (the one asked for, or a piece of it) rather
    than data: a mapping with a schema type and schema keywords, or the schema's own
    `properties`."""
    if not isinstance(value, Mapping):
        return False
    if value.get("type") in _SCHEMA_TYPES and _SCHEMA_WORDS & set(value):
        return True
    properties = schema.get("properties")
    return bool(value) and isinstance(properties, Mapping) and dict(value) == dict(properties)


def _echo(value: Any, schema: Mapping[str, Any]) -> EchoedSchema | None:
    if not is_schema_echo(value, schema):
        return None
    return EchoedSchema(
        "the reply is the JSON Schema itself, not a value that meets it "
        f"(a value looks like {json.dumps(example(schema), ensure_ascii=False)})"
    )


def example(schema: Mapping[str, Any]) -> Any:
    """A small value of the schema's shape, shown to a model that echoed the schema."""
    if schema.get("enum"):
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            return example(schema[key][0])
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        properties = schema.get("properties") or {}
        return {name: example(spec) for name, spec in properties.items()}
    if kind == "array":
        return []
    if not isinstance(kind, str):
        return None
    return {"boolean": False, "string": "…", "integer": 0, "number": 0}.get(kind)


def correction(error: InvalidReply, schema: Mapping[str, Any]) -> str:
    """What a retried prompt gets appended: the error, and the shape we need."""
    if isinstance(error, EchoedSchema):
        return (
            f"\n\nYour previous reply could not be used: {error}.\n"
            "Do not repeat the schema. Reply with only the JSON value itself, for example:\n"
            f"{json.dumps(example(schema), ensure_ascii=False)}"
        )
    return (
        f"\n\nYour previous reply could not be used: {error}\n"
        "Reply again with only a JSON value that meets this JSON Schema, and nothing else:\n"
        f"{json.dumps(schema, ensure_ascii=False)}"
    )


def _excerpt(text: str) -> str:
    stripped = text.strip()
    return repr(stripped[:120] + ("…" if len(stripped) > 120 else ""))


def lenient_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The schema an extraction reply is checked against: every field may be null and none is
    required, so a value the text does not give is left out rather than invented."""
    lenient = {key: value for key, value in schema.items() if key != "required"}
    properties = schema.get("properties")
    if isinstance(properties, Mapping):
        lenient["properties"] = {
            name: {"anyOf": [field, {"type": "null"}]} for name, field in properties.items()
        }
    return lenient
