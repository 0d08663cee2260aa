"""The prompt and the reply of each LLM call, kept only while someone asked for them.

An OpenTelemetry user who opted in to content capture
(`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`) sees each `chat` span's prompt and
reply. The client keeps them on the call's record (`CallRecord.exchange`) only while an observer
that asked for content is registered (`runner.observability.add_observer(content=True)` turns
`keep_exchanges` on, removing the last one turns it off): whether anyone wants content is a fact
of the process, not of a round. The record's `to_json` leaves them out.

Why not in the `llm.call` trace event: the trace is what users keep (session stores,
`runner run --trace` files, `GET …/rounds/{n}`), and every prompt of a round holds the
retrieved passages, so it would grow many times over, and sessions would hold text the user
agreed to send to a telemetry backend, not to store. Kept on the record, the text lives as long
as the round's call records (its `TaskClient`'s list: runner.llm.bound) and reaches the
observer in process. Off, a call pays one global read and keeps nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

_keeping = False  # (`keep_exchanges`)


@dataclass(frozen=True)
class Exchange:
    """What one call sent and got back."""

    prompt: str  # the whole prompt, as sent (a correction appended when one was asked again)
    reply: str | None  # the reply's text as the model wrote it; None when the call failed


def keep_exchanges(keep: bool) -> None:
    """From now on, calls keep their prompt and reply (`keep`), or not."""
    global _keeping
    _keeping = keep


def exchange(prompt: str, reply: str | None) -> Exchange | None:
    """The call's exchange when calls keep theirs; else None."""
    return Exchange(prompt, reply) if _keeping else None
