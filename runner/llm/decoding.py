"""Constrained decoding: how a reply schema reaches a server, and how a server that refuses it
is recognised.

`llm.structured` (per purpose too) picks the mode:

- `json_schema` — the server constrains the reply to the schema: OpenAI-compatible servers get
  `response_format: {"type": "json_schema", "json_schema": {"name", "schema", "strict"}}`
  (OpenAI, vLLM, llama.cpp's llama-server, SGLang, LM Studio), Ollama gets `format: <schema>`;
- `json_object` — the server's JSON mode: `response_format: {"type": "json_object",
  "schema": <schema>}` (llama-cpp-python's server constrains by that schema; others give any
  JSON object), Ollama gets `format: "json"`;
- `prompt` — nothing is sent: only the prompt asks for JSON.

A server that refuses the field is asked again with the next mode down (json_schema →
json_object → prompt); the client remembers that for the run and says so once.

The schema sent is the reply schema *closed*: every object lists all its properties as required
and allows no others, so that a decoder constrained to it cannot wander. A property the reply
schema leaves optional stays optional in substance where it allows `null` (extraction does).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

MODES = ("json_schema", "json_object", "prompt")
_NEXT = {"json_schema": "json_object", "json_object": "prompt"}
_SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")


def closed(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The schema with every object closed (`additionalProperties: false`) and all its
    properties required, recursively. Validation still uses the reply schema as written."""
    result = {key: _closed_value(key, value) for key, value in schema.items()}
    properties = result.get("properties")
    if isinstance(properties, Mapping):
        result["required"] = list(properties)
        result.setdefault("additionalProperties", False)
    return result


def _closed_value(key: str, value: Any) -> Any:
    if key == "properties" and isinstance(value, Mapping):
        return {name: _closed_schema(spec) for name, spec in value.items()}
    if key in ("items", "additionalProperties", "not") and isinstance(value, Mapping):
        return closed(value)
    if key in _SCHEMA_LISTS and isinstance(value, list):
        return [_closed_schema(spec) for spec in value]
    return value


def _closed_schema(spec: Any) -> Any:
    return closed(spec) if isinstance(spec, Mapping) else spec


def next_mode(mode: str) -> str | None:
    """The mode to try when a server refuses `mode`; None for `prompt`, which sends nothing."""
    return _NEXT.get(mode)


def openai_fields(mode: str, name: str, schema: Mapping[str, Any]) -> dict[str, Any]:
    """The request-body fields of an OpenAI-compatible chat completion for this mode."""
    sent = closed(schema)
    if mode == "json_schema":
        return {
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": name, "schema": sent, "strict": True},
            }
        }
    if mode == "json_object":
        return {"response_format": {"type": "json_object", "schema": sent}}
    return {}


def ollama_fields(mode: str, schema: Mapping[str, Any]) -> dict[str, Any]:
    """Ollama's `format`: the schema itself, or its JSON mode."""
    if mode == "json_schema":
        return {"format": closed(schema)}
    if mode == "json_object":
        return {"format": "json"}
    return {}


def refuses(error: BaseException, field: str) -> bool:
    """Whether an error is a server refusing the structured-output field: an HTTP error whose
    message names it (`response_format` for OpenAI-compatible servers, `format` for Ollama).
    llama-cpp-python answers an unknown `response_format` type with HTTP 500, vLLM and OpenAI
    with 400, FastAPI-based servers with 422: the status alone cannot tell, the message does."""
    status = getattr(error, "status_code", None)
    if not isinstance(status, int) or status < 400:
        return False
    return field in str(error).lower()
