"""The prompt and the reply of each LLM call, kept only while someone asked for them.

An OpenTelemetry user who opted in to content capture
(`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`) sees each `chat` span's prompt and
reply. The client keeps them on the call's record (`CallRecord.exchange`) only inside
`keeping_exchanges()`, which the application layer enters for a round when an observer wants
content; the record's `to_json` leaves them out.

Why not in the `llm.call` trace event: the trace is what users keep (session stores,
`runner run --trace` files, `GET …/rounds/{n}`), and every prompt of a round holds the
retrieved passages, so it would grow many times over, and sessions would hold text the user
agreed to send to a telemetry backend, not to store. Kept on the record, the text lives as long
as the round's call records (`calls_of_one_round`) and reaches the observer in process. Off, a
call pays one context-variable read and keeps nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

_KEEPING: ContextVar[bool] = ContextVar("runner_llm_keeping_exchanges", default=False)


@dataclass(frozen=True)
class Exchange:
    """What one call sent and got back."""

    prompt: str  # the whole prompt, as sent (a correction appended when one was asked again)
    reply: str | None  # the reply's text as the model wrote it; None when the call failed


@contextmanager
def keeping_exchanges(keep: bool = True) -> Iterator[None]:
    """Within the block (and the asyncio tasks it starts), calls keep their prompt and reply
    when `keep`."""
    token = _KEEPING.set(keep)
    try:
        yield
    finally:
        _KEEPING.reset(token)


def exchange(prompt: str, reply: str | None) -> Exchange | None:
    """The call's exchange when calls keep theirs; else None."""
    return Exchange(prompt, reply) if _KEEPING.get() else None
