"""The trace's events as types: one frozen dataclass per event of `EVENTS`, read from the dicts
the engine writes (`read_event`, `read_trace`).

The engine emits plain dicts (`Trace.record`): the hot path stays a dict, and the JSON Lines
file is those dicts as they are. Whoever reads a trace (the task tree, `runner explain`, the
playground's Why page, `runner test`, the OpenTelemetry spans) reads these types instead, so
that a field's name and type are stated once, here, beside `schemas/trace.schema.json`, which
a test holds them to: each class's fields are its event's properties, those without a default
its required ones.

Every event has the head `seq`, `ms` and `task`. A field the schema marks optional is None
when the event does not have it. Values are taken as the trace holds them (JSON lists stay
lists); `Trace.validate` checks them against the schema. A field no class declares (a tool may
add its own) is kept in `extra`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, ClassVar, TypeVar

_Event = TypeVar("_Event", bound="TraceEvent")
HEAD = ("seq", "ms", "task")


class TraceFormatError(ValueError):
    """A trace event that is not of its kind's shape: a required field missing."""


@dataclass(frozen=True, kw_only=True)
class TraceEvent:
    """What every event has: its number, when it happened, the task it is about (None: the
    round's own) and the fields no event class declares."""

    EVENT: ClassVar[str] = ""  # the `event` name of the class's events
    # fields whose values are objects of their own, made by these functions
    NESTED: ClassVar[Mapping[str, Callable[[Any], Any]]] = {}

    seq: int
    ms: float
    task: str | None
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False)

    @classmethod
    def from_dict(cls: type[_Event], data: Mapping[str, Any]) -> _Event:
        """The event of this class a trace dict `{seq, ms, event, task, ...}` is."""
        declared = _declared(cls)
        missing = [name for name in _required(cls) if name not in data]
        if missing:
            raise TraceFormatError(
                f"trace event {data.get('seq')} ({cls.EVENT}) lacks {', '.join(missing)}"
            )
        values = {name: data[name] for name in declared if name in data}
        for name, make in cls.NESTED.items():
            if values.get(name) is not None:
                values[name] = make(values[name])
        extra = {k: v for k, v in data.items() if k not in declared and k != "event"}
        return cls(**values, extra=extra)


# --- the parts of events ---------------------------------------------------------------------


@dataclass(frozen=True)
class ActivatedTool:
    """A tool an activation chose, and why (runner.engine.activation's reasons)."""

    tool: str
    reason: str


@dataclass(frozen=True)
class RankedPage:
    """A page a retrieval returned: its rank from 1, where it is, and the search's score (None
    for a neighbour search)."""

    rank: int
    document: str
    page: int
    heading: str
    score: float | None
    headings: Sequence[str] | None = None  # a page of several sections: each one's heading

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RankedPage:
        return cls(
            rank=data["rank"],
            document=data["document"],
            page=data["page"],
            heading=data["heading"],
            score=data["score"],
            headings=data.get("headings"),
        )

    def to_dict(self) -> dict[str, Any]:
        """The page as the trace writes it."""
        row: dict[str, Any] = {
            "rank": self.rank,
            "document": self.document,
            "page": self.page,
            "heading": self.heading,
            "score": self.score,
        }
        if self.headings is not None:
            row["headings"] = list(self.headings)
        return row


def _activated(items: Iterable[Mapping[str, Any]]) -> tuple[ActivatedTool, ...]:
    return tuple(ActivatedTool(item["tool"], item["reason"]) for item in items)


def _pages(rows: Iterable[Mapping[str, Any]]) -> tuple[RankedPage, ...]:
    return tuple(RankedPage.from_dict(row) for row in rows)


# --- the events, in the order a round makes them ---------------------------------------------


@dataclass(frozen=True, kw_only=True)
class RoundStart(TraceEvent):
    """A round begins: a fresh message, the answer to the pending question (C24), a resume."""

    EVENT: ClassVar[str] = "round.start"
    session: str
    round: int
    kind: str  # fresh | answer | resume
    message: str


@dataclass(frozen=True, kw_only=True)
class TaskStart(TraceEvent):
    """A task began: the round's first, a subtask a coordinator made, or one resumed."""

    EVENT: ClassVar[str] = "task.start"
    prompt: str
    depth: int
    resumed: bool
    prompt_type: str | None = None
    conditional: bool | None = None
    owner: str | None = None  # the coordinator that made it
    required_tools: Sequence[str] | None = None


@dataclass(frozen=True, kw_only=True)
class TaskEnd(TraceEvent):
    """A task finished, and how (done, waiting for the user, failed, skipped)."""

    EVENT: ClassVar[str] = "task.end"
    status: str  # done | waiting | failed | skipped
    stopped_by: str | None = None  # clarification | answer | error


@dataclass(frozen=True, kw_only=True)
class CoordinatorRun(TraceEvent):
    """A coordinator looked at the task (C1-C2): whether it changed it, and how."""

    EVENT: ClassVar[str] = "coordinator.run"
    coordinator: str
    changed: bool
    subtasks: Sequence[str]
    appended: bool | None = None


@dataclass(frozen=True, kw_only=True)
class CoordinatorSkip(TraceEvent):
    """A coordinator that did not run on a task, and why (C4's depth, its types)."""

    EVENT: ClassVar[str] = "coordinator.skip"
    coordinator: str
    reason: str  # applied | depth | prompt_type
    depth: int | None = None


@dataclass(frozen=True, kw_only=True)
class CoordinatorError(TraceEvent):
    """A coordinator that raised; the round went on with the task as it was."""

    EVENT: ClassVar[str] = "coordinator.error"
    coordinator: str
    error: str
    restored: bool | None = None
    traceback: str | None = None


@dataclass(frozen=True, kw_only=True)
class SubtaskChoice(TraceEvent):
    """Whether a conditional subtask runs, who decided and why (C16-C19)."""

    EVENT: ClassVar[str] = "subtask.decision"
    parent: str
    decision: str  # run | skip
    decided_by: str | None
    reason: str
    completed_keys: Sequence[str] | None = None
    traceback: str | None = None


@dataclass(frozen=True, kw_only=True)
class ActivationChoice(TraceEvent):
    """Which tools a task's activation chose (C13-C15, C21-C22)."""

    EVENT: ClassVar[str] = "activation"
    NESTED: ClassVar[Mapping[str, Callable[[Any], Any]]] = {"activated": _activated}
    mode: str  # forced | selected
    candidates: Sequence[str]
    activated: Sequence[ActivatedTool]
    suitability: Mapping[str, bool] | None = None
    ignored: Sequence[str] | None = None


@dataclass(frozen=True, kw_only=True)
class ToolRun(TraceEvent):
    """A tool ran on a task: what kind of result it gave, and whether it was empty."""

    EVENT: ClassVar[str] = "tool.run"
    tool: str
    key: str
    result: str  # context | guaranteed
    empty: bool
    reason: str | None = None
    consumer: bool | None = None
    chars: int | None = None
    sources: int | None = None


@dataclass(frozen=True, kw_only=True)
class ToolError(TraceEvent):
    """A tool that raised; the round went on without its result (C10)."""

    EVENT: ClassVar[str] = "tool.error"
    tool: str
    key: str
    error: str
    traceback: str | None = None


@dataclass(frozen=True, kw_only=True)
class Retrieval(TraceEvent):
    """The pages a retrieval-kind tool returned, best first."""

    EVENT: ClassVar[str] = "retrieval"
    NESTED: ClassVar[Mapping[str, Callable[[Any], Any]]] = {"pages": _pages}
    tool: str
    corpus: str
    query: str
    pages: Sequence[RankedPage]
    rewritten: str | None = None
    searched: str | None = None
    parts: Sequence[str] | None = None  # the parts of the question searched on their own
    evidence: Mapping[str, Any] | None = None

    @classmethod
    def listed(cls, record: Mapping[str, Any]) -> Retrieval:
        """A retrieval as `runner run --json` lists it under `retrieval` (the event without
        its `seq` and `ms`, which read as 0)."""
        return cls.from_dict({"seq": 0, "ms": 0.0, "task": None, **record})


@dataclass(frozen=True, kw_only=True)
class ClarificationAsk(TraceEvent):
    """A tool asked the user a question (C24): the round waits for the answer."""

    EVENT: ClassVar[str] = "clarification.ask"
    tool: str
    question: str
    rounds: int


@dataclass(frozen=True, kw_only=True)
class ClarificationResume(TraceEvent):
    """The user's answer handed back to the tool that asked."""

    EVENT: ClassVar[str] = "clarification.resume"
    tool: str
    answer: str
    question: str | None = None


@dataclass(frozen=True, kw_only=True)
class Terminal(TraceEvent):
    """A tool's result that ends the task: an answer or a guaranteed result."""

    EVENT: ClassVar[str] = "terminal"
    tool: str
    key: str
    chars: int | None = None
    sources: int | None = None
    held: bool | None = None  # given by a subtask running ahead, released in its turn


@dataclass(frozen=True, kw_only=True)
class GatekeeperVerdict(TraceEvent):
    """Is the root's primary context enough to answer? (C27)"""

    EVENT: ClassVar[str] = "gatekeeper"
    mode: str  # llm | rule
    enough: bool
    reason: str
    passages: int | None = None


@dataclass(frozen=True, kw_only=True)
class DeepFallbackRun(TraceEvent):
    """Whether the deep-search fallback ran after the gatekeeper's verdict, and why."""

    EVENT: ClassVar[str] = "deep_fallback"
    coordinator: str
    run: bool
    reason: str


@dataclass(frozen=True, kw_only=True)
class LLMCall(TraceEvent):
    """One LLM attempt or cache hit (runner.llm.accounting.CallRecord); its task is the one the
    call was made for."""

    EVENT: ClassVar[str] = "llm.call"
    purpose: str
    tool: str | None = None
    provider: str | None = None
    model: str | None = None
    latency_ms: float | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached: bool | None = None
    attempt: int | None = None
    outcome: str | None = None  # ok | invalid | degenerate | error
    tokens_estimated: bool | None = None
    error: str | None = None
    queue_ms: float | None = None
    structured: str | None = None
    notice: str | None = None
    finish_reason: str | None = None
    first_token_ms: float | None = None
    prompt_cut: Mapping[str, Any] | None = None
    degenerate: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    server_address: str | None = None
    server_port: int | None = None
    output_type: str | None = None
    response_model: str | None = None
    response_id: str | None = None


@dataclass(frozen=True, kw_only=True)
class TraceWarning(TraceEvent):
    """A warning of the round (a tool's, when `tool` is set), as the user is told it."""

    EVENT: ClassVar[str] = "warning"
    message: str
    tool: str | None = None  # the tool that wrote it, when a tool did


@dataclass(frozen=True, kw_only=True)
class RoundEnd(TraceEvent):
    """The round's end: its outcome, and the error that ended it, if one did."""

    EVENT: ClassVar[str] = "round.end"
    outcome: str  # answer | clarification | error
    error: str | None = None
    sources: int | None = None
    traceback: str | None = None


@dataclass(frozen=True, kw_only=True)
class Unreadable(TraceEvent):
    """An event this runner cannot read: of a kind it does not know, or lacking a field its
    kind requires (a trace written by another version). Its fields are kept as they were."""

    kind: str
    values: Mapping[str, Any]
    problem: str


EVENT_TYPES: Mapping[str, type[TraceEvent]] = {
    kind.EVENT: kind
    for kind in (
        RoundStart,
        TaskStart,
        TaskEnd,
        CoordinatorRun,
        CoordinatorSkip,
        CoordinatorError,
        SubtaskChoice,
        ActivationChoice,
        ToolRun,
        ToolError,
        Retrieval,
        ClarificationAsk,
        ClarificationResume,
        Terminal,
        GatekeeperVerdict,
        DeepFallbackRun,
        LLMCall,
        TraceWarning,
        RoundEnd,
    )
}


def read_event(data: Mapping[str, Any]) -> TraceEvent:
    """The typed event a trace dict is; `Unreadable` when it is of no known shape."""
    kind = str(data.get("event"))
    cls = EVENT_TYPES.get(kind)
    try:
        if cls is None:
            raise TraceFormatError(f"unknown trace event {kind!r}")
        return cls.from_dict(data)
    except (TraceFormatError, KeyError, TypeError) as error:
        return Unreadable(
            seq=int(data.get("seq") or 0),
            ms=float(data.get("ms") or 0),
            task=data.get("task"),
            kind=kind,
            values={k: v for k, v in data.items() if k not in (*HEAD, "event")},
            problem=str(error),
        )


def read_trace(events: Iterable[Mapping[str, Any] | TraceEvent]) -> list[TraceEvent]:
    """A trace's events, typed (those typed already kept as they are)."""
    return [e if isinstance(e, TraceEvent) else read_event(e) for e in events]


def of_kind(events: Iterable[TraceEvent], kind: type[_Event]) -> list[_Event]:
    """The events of one class, in order."""
    return [event for event in events if isinstance(event, kind)]


def _declared(cls: type[TraceEvent]) -> frozenset[str]:
    return frozenset(f.name for f in fields(cls) if f.name != "extra")


def _required(cls: type[TraceEvent]) -> list[str]:
    return [
        f.name
        for f in fields(cls)
        if f.default is MISSING and f.default_factory is MISSING and f.name not in HEAD
    ]


def body_fields(cls: type[TraceEvent]) -> tuple[list[str], list[str]]:
    """(every field, the required ones) an event class declares beside the head: what the
    trace's schema lists for its event."""
    names = [f.name for f in fields(cls) if f.name not in (*HEAD, "extra")]
    return names, _required(cls)
