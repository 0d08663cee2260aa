"""The OpenAI request fields runner honours, and the ones it refuses (never ignores).

A pipeline answers with one message of text, with its own model settings: a request that asks
for several choices (`n` > 1), for tool calls (`tools`, `tool_choice`, `functions`,
`function_call`), for a JSON reply (`response_format`) or for log-probabilities (`logprobs`,
`top_logprobs`) is refused with a 400 naming the field, so that a client never takes an
answer for what it asked. `max_tokens` (and `max_completion_tokens`) must be a whole number
from 1: the pipeline's own `llm.max_tokens` bounds each of its calls. `stream` is a boolean;
`stream_options.include_usage` asks for the usage chunk the API defines.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from runner.service.errors import BadRequest

MAX_TOKENS_LIMIT = 1_000_000
# a field, the values of it that ask nothing runner cannot do, and why runner cannot
_REFUSED: dict[str, tuple[tuple[Any, ...], str]] = {
    "tools": ((None, []), "a pipeline calls its own tools; it returns no tool calls"),
    "functions": ((None, []), "a pipeline calls its own tools; it returns no function calls"),
    "tool_choice": ((None, "none", "auto"), "a pipeline returns no tool calls"),
    "function_call": ((None, "none", "auto"), "a pipeline returns no function calls"),
    "response_format": ((None, {"type": "text"}), "a pipeline answers in text"),
    "logprobs": ((None, False), "runner returns no log-probabilities"),
    "top_logprobs": ((None,), "runner returns no log-probabilities"),
}


@dataclass(frozen=True)
class Streaming:
    stream: bool = False
    include_usage: bool = False  # a last chunk with `choices: []` and the usage


def checked_fields(data: dict[str, Any]) -> Streaming:
    """The request's streaming settings; a BadRequest naming the first field runner cannot
    honour."""
    for name, (harmless, why) in _REFUSED.items():
        if name in data and data[name] not in harmless:
            raise BadRequest(f"`{name}` is not supported: {why}; leave it out", param=name)
    n = data.get("n")
    if n is not None and (not _whole(n) or n != 1):
        raise BadRequest(
            "`n` must be 1: a pipeline gives one answer (send the request again for another)",
            param="n",
        )
    for name in ("max_tokens", "max_completion_tokens"):
        value = data.get(name)
        if value is not None and (not _whole(value) or not 1 <= value <= MAX_TOKENS_LIMIT):
            raise BadRequest(
                f"`{name}` must be a whole number from 1 to {MAX_TOKENS_LIMIT:,}", param=name
            )
    return _streaming(data)


def _streaming(data: dict[str, Any]) -> Streaming:
    stream = data.get("stream")
    if stream is not None and not isinstance(stream, bool):
        raise BadRequest("`stream` must be true or false (a JSON boolean)", param="stream")
    options = data.get("stream_options")
    if options is None:
        return Streaming(bool(stream))
    if not stream:
        raise BadRequest("`stream_options` goes with `stream: true` only", param="stream_options")
    if not isinstance(options, dict) or set(options) - {"include_usage"}:
        raise BadRequest(
            '`stream_options` takes `include_usage` only: {"include_usage": true}',
            param="stream_options",
        )
    include = options.get("include_usage", False)
    if not isinstance(include, bool):
        raise BadRequest(
            "`stream_options.include_usage` must be true or false",
            param="stream_options.include_usage",
        )
    return Streaming(True, include)


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)
