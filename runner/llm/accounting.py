"""Per-call records (the trace's `llm.call` events) and totals by purpose (the run's stats)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from dataclasses import fields as dataclass_fields
from typing import Any

from runner.llm.exchanges import Exchange


@dataclass(frozen=True)
class CallRecord:
    """One provider attempt, or one answer from the cache."""

    purpose: str
    tool: str | None
    provider: str
    model: str
    latency_ms: float
    prompt_tokens: int
    completion_tokens: int
    cached: bool
    attempt: int  # 1 for the first try of a request; retries count up
    # ok | invalid (the structured reply failed validation) | degenerate (a looping or echoing
    # text reply, asked again) | error
    outcome: str
    tokens_estimated: bool = (
        False  # the provider gave no usage; see runner.text.words.estimate_tokens
    )
    error: str | None = None
    queue_ms: float = 0.0  # the wait for a concurrency slot, apart from latency_ms (the call's)
    structured: str | None = None  # how the reply schema was sent (runner.llm.decoding)
    notice: str | None = None  # said once per run: the server refused the structured mode
    prompt_cut: Mapping[str, Any] | None = None  # the prompt was cut to fit the window
    degenerate: str | None = None  # the reply stayed degenerate and was cut: the round degrades
    # the task it was made for (the `TaskClient` the call was made through says: bound.py)
    task: str | None = None
    finish_reason: str | None = None  # why the model stopped, when the provider said
    first_token_ms: float | None = None  # a streamed reply: when its first text arrived
    # what the request asked of a model server, and where it went (None: no server, as the
    # offline and scripted providers): the GenAI conventions' request and server attributes
    temperature: float | None = None
    max_tokens: int | None = None
    server_address: str | None = None
    server_port: int | None = None
    output_type: str | None = None  # json (a reply schema was sent) | text
    response_model: str | None = None  # as the server named it
    response_id: str | None = None
    # its prompt and reply, for an observer that asked for them (runner.llm.exchanges)
    exchange: Exchange | None = field(default=None, repr=False)

    def to_json(self) -> dict[str, Any]:
        # field by field: dataclasses.asdict deep-copied every value (and a kept exchange, the
        # prompt and reply) only for the exchange to be dropped: ~0.3 ms a served round
        fields = {
            name: value
            for name in _FIELD_NAMES
            if (value := getattr(self, name)) is not None and name != "exchange"
        }  # the exchange is told in process only, never written in the trace
        if self.prompt_cut is not None:
            fields["prompt_cut"] = dict(self.prompt_cut)
        return fields


_FIELD_NAMES = tuple(field.name for field in dataclass_fields(CallRecord))


class Accounting:
    """Call records and their totals: a round's (its `TaskClient`'s list), or the calls a
    client made outside any round (the CLI's edges, a test's direct calls)."""

    def __init__(self, calls: list[CallRecord] | None = None) -> None:
        self.calls: list[CallRecord] = [] if calls is None else calls

    def add(self, record: CallRecord) -> int:
        """Adds a record; returns its index (so its outcome can be amended)."""
        self.calls.append(record)
        return len(self.calls) - 1

    def stats(self) -> dict[str, Any]:
        """`{"llm_calls", "by_purpose": {purpose: {calls, prompt_tokens, completion_tokens, ms,
        invalid}}, "prompt_tokens", "completion_tokens"}`; failed attempts count too (they cost
        time). `invalid` (unusable replies) is there only when there were some."""
        by_purpose: dict[str, dict[str, Any]] = {}
        for call in self.calls:
            entry = by_purpose.setdefault(
                call.purpose, {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "ms": 0.0}
            )
            entry["calls"] += 1
            entry["prompt_tokens"] += call.prompt_tokens
            entry["completion_tokens"] += call.completion_tokens
            entry["ms"] = round(entry["ms"] + call.latency_ms, 3)
            if call.outcome == "invalid":  # an unusable reply, asked again (or the last one)
                entry["invalid"] = entry.get("invalid", 0) + 1
        return {
            "llm_calls": len(self.calls),
            "by_purpose": by_purpose,
            "prompt_tokens": sum(c.prompt_tokens for c in self.calls),
            "completion_tokens": sum(c.completion_tokens for c in self.calls),
        }
