"""Why a round did what it did, as data a page can draw: its task tree with the reasons, and a
timeline of its LLM calls.

Plain functions over the two things a served round gives back: its result (the object `runner
run --json` prints) and its trace events. The tree is the result's own tree, each task annotated
with what the trace says happened to it: which coordinator made its subtasks, which tools were
candidates and what the suitability call answered, who decided to skip a conditional subtask, the
gatekeeper's verdict, whether the deep search ran and the pages each retrieval tool ranked.
The trace is read as typed events and every note is runner.trace.why's, as `runner explain`'s
sentences are.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from runner.trace import why
from runner.trace.events import (
    ClarificationAsk,
    DeepFallbackRun,
    LLMCall,
    Retrieval,
    RoundStart,
    Terminal,
    ToolError,
    ToolRun,
    TraceEvent,
    TraceWarning,
    read_trace,
)
from runner.trace.why import PAIR_HALVES, ROUND_KINDS

# Why a tool ran, as the page's templates say it (runner.playground.pages): runner.trace.why's.
REASON_TEXT = why.TOOL_REASON_TEXT


@dataclass
class ToolView:
    name: str
    key: str
    status: str
    reason: str
    reason_text: str
    items: int
    guaranteed: bool
    sources: int = 0  # the pages or rows its result cites
    gave_answer: bool = False
    consumer: bool = False
    error: str | None = None
    question: str | None = None
    retrieved: list[dict[str, Any]] = field(default_factory=list)  # ranked pages, best first
    query: str | None = None  # what the retrieval searched for
    corpus: str | None = None


@dataclass
class TaskView:
    task_no: str
    prompt: str
    status: str
    prompt_type: str | None
    owner: str | None
    conditional: bool
    required_tools: list[str]
    tools: list[ToolView] = field(default_factory=list)
    children: list[TaskView] = field(default_factory=list)
    decision: str | None = None  # a conditional subtask's: "skip, decided by …: …"
    pair: str | None = None  # a deep-search subtask's half
    notes: list[str] = field(default_factory=list)  # coordinators, candidates, verdicts
    problems: list[str] = field(default_factory=list)  # errors and warnings on this task

    @property
    def skipped(self) -> bool:
        return self.status == "skipped"


@dataclass(frozen=True)
class LLMCallView:
    seq: int
    task: str | None
    purpose: str
    tool: str | None
    start_ms: float
    latency_ms: float
    prompt_tokens: int
    completion_tokens: int
    cached: bool
    outcome: str
    error: str | None = None


@dataclass
class Timeline:
    calls: list[LLMCallView]
    span_ms: float  # from the round's start to its last event

    def bar(self, call: LLMCallView) -> tuple[float, float]:
        """Where a call's bar starts and how wide it is, in percent of the round."""
        if self.span_ms <= 0:
            return 0.0, 0.0
        left = 100 * call.start_ms / self.span_ms
        width = max(100 * call.latency_ms / self.span_ms, 0.5)
        return round(min(left, 99.5), 2), round(min(width, 100 - min(left, 99.5)), 2)

    def by_purpose(self) -> list[dict[str, Any]]:
        totals: dict[str, dict[str, Any]] = {}
        for call in self.calls:
            row = totals.setdefault(
                call.purpose,
                {"purpose": call.purpose, "calls": 0, "ms": 0.0, "tokens": 0},
            )
            row["calls"] += 1
            row["ms"] = round(row["ms"] + call.latency_ms, 3)
            row["tokens"] += call.prompt_tokens + call.completion_tokens
        return list(totals.values())


def tools_that_ran(task: TaskView | None) -> list[str]:
    """The round's tools that ran, each once, in tree order: what a chat line can show."""
    if task is None:
        return []
    names = [tool.name for tool in task.tools if tool.status in ("done", "asked", "failed")]
    for child in task.children:
        names.extend(tools_that_ran(child))
    return list(dict.fromkeys(names))


@dataclass
class RoundView:
    round: int
    kind: str  # what the message was: a new message, the answer to the question, a resume
    message: str
    outcome: str
    tree: TaskView | None
    timeline: Timeline
    notes: list[str]  # the round's own warnings the result does not list

    @property
    def ran(self) -> list[str]:
        return tools_that_ran(self.tree)


def round_view(result: Mapping[str, Any], trace: Iterable[Mapping[str, Any]]) -> RoundView:
    events = read_trace(trace)
    start = next((e for e in events if isinstance(e, RoundStart)), None)
    by_task: dict[str | None, list[TraceEvent]] = defaultdict(list)
    for event in events:
        by_task[event.task].append(event)
    terminal = {e.key for e in events if isinstance(e, Terminal)}
    tasks = result.get("tasks")
    in_order = sorted(events, key=lambda e: e.seq)
    tree = _task_view(tasks, by_task, terminal, in_order) if tasks else None
    shown = {str(w) for w in result.get("warnings") or []}  # the page shows those with the result
    notes = [
        str(e.message)
        for e in by_task.get(None, [])
        if isinstance(e, TraceWarning) and str(e.message) not in shown
    ]
    kind = "" if start is None else start.kind
    return RoundView(
        round=int(result.get("round") or (start.round if start else 0) or 0),
        kind=ROUND_KINDS.get(kind, kind),
        message="" if start is None else start.message,
        outcome=str(result.get("outcome", "")),
        tree=tree,
        timeline=timeline(events),
        notes=list(dict.fromkeys(notes)),
    )


def timeline(trace: Iterable[Mapping[str, Any] | TraceEvent]) -> Timeline:
    calls, last = [], 0.0
    for event in read_trace(trace):
        last = max(last, float(event.ms or 0))
        if not isinstance(event, LLMCall):
            continue
        latency = float(event.latency_ms or 0)
        calls.append(
            LLMCallView(
                seq=int(event.seq or 0),
                task=event.task,
                purpose=str(event.purpose),
                tool=event.tool,
                # the event is written when the call returns
                start_ms=max(float(event.ms or 0) - latency, 0.0),
                latency_ms=latency,
                prompt_tokens=int(event.prompt_tokens or 0),
                completion_tokens=int(event.completion_tokens or 0),
                cached=bool(event.cached),
                outcome=str(event.outcome or "ok"),
                error=event.error,
            )
        )
    return Timeline(calls, last)


def _task_view(
    task: Mapping[str, Any],
    by_task: Mapping[str | None, list[TraceEvent]],
    terminal: set[str],
    round_events: Sequence[TraceEvent],
) -> TaskView:
    task_no = str(task["task_no"])
    events = by_task.get(task_no, [])
    view = TaskView(
        task_no=task_no,
        prompt=str(task.get("prompt", "")),
        status=why.task_status(task),
        prompt_type=task.get("prompt_type"),
        owner=task.get("owner"),
        conditional=bool(task.get("conditional")),
        required_tools=list(task.get("required_tools") or []),
        pair=_pair_half(task_no, task.get("owner"), by_task),
    )
    runs = {e.key: e for e in events if isinstance(e, (ToolRun, ToolError))}
    retrievals = {e.tool: e for e in events if isinstance(e, Retrieval)}
    asked = {e.tool: e for e in events if isinstance(e, ClarificationAsk)}
    for tool in task.get("tools") or []:
        shown = _tool_view(tool, runs.get(tool.get("key")), asked, terminal)
        _add_retrieval(shown, retrievals.get(tool.get("name")))
        view.tools.append(shown)
    for event in events:
        said = why.note(event, round_events)
        if said is None:
            continue
        if said.kind == "decision":
            view.decision = said.text
        else:
            (view.problems if said.kind == "problem" else view.notes).append(said.text)
    view.children = [
        _task_view(child, by_task, terminal, round_events) for child in task.get("children") or []
    ]
    return view


def _tool_view(
    tool: Mapping[str, Any],
    run: ToolRun | ToolError | None,
    asked: Mapping[str, ClarificationAsk],
    terminal: set[str],
) -> ToolView:
    reason = str(tool.get("reason") or "")
    question = asked.get(tool.get("name", "")) if tool.get("status") == "asked" else None
    return ToolView(
        name=str(tool["name"]),
        key=str(tool.get("key", "")),
        status=str(tool.get("status", "")),
        reason=reason,
        reason_text=why.tool_reason_text(reason),
        items=int(tool.get("items") or 0),
        guaranteed=bool(tool.get("guaranteed")),
        sources=int(run.sources or 0) if isinstance(run, ToolRun) else 0,
        gave_answer=tool.get("key") in terminal,
        consumer=bool(run.consumer) if isinstance(run, ToolRun) else False,
        error=run.error if isinstance(run, ToolError) else None,
        question=None if question is None else question.question,
    )


def _add_retrieval(tool: ToolView, event: Retrieval | None) -> None:
    """The pages a retrieval-kind tool ranked on this task (its `retrieval` trace event),
    best first."""
    if event is None:
        return
    pages = [page.to_dict() for page in event.pages]
    tool.retrieved = sorted(pages, key=lambda page: page.get("rank") or 0)
    tool.query = why.retrieval_query(event)
    tool.corpus = event.corpus


def _pair_half(
    task_no: str, owner: str | None, by_task: Mapping[str | None, list[TraceEvent]]
) -> str | None:
    half = task_no.rsplit(".", 1)[-1]
    if half not in PAIR_HALVES or owner is None:
        return None
    parent = task_no.rsplit(".", 2)[0]
    fallback = any(
        isinstance(e, DeepFallbackRun) and e.coordinator == owner for e in by_task.get(parent, [])
    )
    return PAIR_HALVES[half] if fallback else None
