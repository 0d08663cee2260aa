"""Per-call records (the trace's `llm.call` events) and totals by purpose (the run's stats)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import asdict, dataclass, field
from typing import Any

from runner.llm.exchanges import Exchange

# The task an LLM call is made for. The engine sets it around every step it takes for a task
# (its coordinators, suitability call, tools, a conditional decision), so each record names its
# task, even for calls made concurrently by the subtasks of a parallel group. A context variable
# because the calls cross the plugin interface: a tool calls `env.llm` and `env.prompts`
# (runner.llm.types.LLMClient, docs/plugins.md), which carry no task and are shared by every
# round of the runtime, and asyncio gives each parallel subtask's task its own copy.
CHARGED_TASK: ContextVar[str | None] = ContextVar("runner_llm_charged_task", default=None)


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
    task: str | None = field(default_factory=CHARGED_TASK.get)  # the task it was made for
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
        fields = {key: value for key, value in asdict(self).items() if value is not None}
        fields.pop("exchange", None)  # told in process only, never written in the trace
        if self.prompt_cut is not None:
            fields["prompt_cut"] = dict(self.prompt_cut)
        return fields


# The call records of the round running in this context (an asyncio task and the tasks it
# starts). A service runs many rounds at once on one client: each round's trace and stats count
# its own calls only, and a long-lived process does not keep every call it ever made. A context
# variable for the reason of CHARGED_TASK: the client is shared, and the calls of a round reach
# it through the plugin interface, which names no round.
_ROUND_CALLS: ContextVar[list[CallRecord] | None] = ContextVar("runner_round_calls", default=None)


@contextmanager
def calls_of_one_round() -> Iterator[None]:
    """Within the block, a client's `calls` (and its stats) are those made in the block."""
    scope = _ROUND_CALLS.set([])
    try:
        yield
    finally:
        _ROUND_CALLS.reset(scope)


class Accounting:
    def __init__(self) -> None:
        self.calls: list[CallRecord] = []

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


class RoundAccounting(Accounting):
    """A client's accounting: inside `calls_of_one_round` its calls are that round's only."""

    def __init__(self) -> None:
        self._outside: list[CallRecord] = []  # calls made outside any round (the CLI's edges)

    @property
    def calls(self) -> list[CallRecord]:  # type: ignore[override]  # the round's list, not one kept
        current = _ROUND_CALLS.get()
        return self._outside if current is None else current
