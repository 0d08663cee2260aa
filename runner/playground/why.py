"""Why a round did what it did, as data a page can draw: its task tree with the reasons, and a
timeline of its LLM calls.

Plain functions over the two things a served round gives back: its result (the object `runner
run --json` prints) and its trace events. The tree is the result's own tree, each task annotated
with what the trace says happened to it: which coordinator made its subtasks, which tools were
candidates and what the suitability call answered, who decided to skip a conditional subtask, the
gatekeeper's verdict, whether the deep search ran and the pages each retrieval tool ranked.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from runner.explain.session import ROUND_KINDS, SKIP_REASONS

Event = Mapping[str, Any]

# Why a tool ran, as a sentence a domain author reads (the engine's activation reasons).
REASON_TEXT = {
    "forced": "forced: the subtask requires it",
    "rule": "its activation rule matched the task",
    "suitability": "the suitability call said yes",
    "always": "activation: always",
    "retrieval": "the retrieval tool, on every question",
    "after_subtasks": "after its subtasks, from their results",
    "deep_fallback": "the deep search, because the gatekeeper found the pages not enough",
}

# The two halves of one deep-search pair (`<n>.<i>.n`, `<n>.<i>.s`).
PAIR_HALVES = {"n": "neighbouring pages", "s": "full search, if the neighbours found nothing"}


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


def round_view(result: Mapping[str, Any], trace: Sequence[Event]) -> RoundView:
    start = next((e for e in trace if e.get("event") == "round.start"), {})
    by_task: dict[str | None, list[Event]] = defaultdict(list)
    for event in trace:
        by_task[event.get("task")].append(event)
    terminal = {e.get("key") for e in trace if e.get("event") == "terminal"}
    tasks = result.get("tasks")
    tree = _task_view(tasks, by_task, terminal) if tasks else None
    shown = {str(w) for w in result.get("warnings") or []}  # the page shows those with the result
    notes = [
        str(e.get("message"))
        for e in by_task.get(None, [])
        if e.get("event") == "warning" and str(e.get("message")) not in shown
    ]
    return RoundView(
        round=int(result.get("round") or start.get("round") or 0),
        kind=ROUND_KINDS.get(str(start.get("kind", "")), str(start.get("kind", ""))),
        message=str(start.get("message", "")),
        outcome=str(result.get("outcome", "")),
        tree=tree,
        timeline=timeline(trace),
        notes=list(dict.fromkeys(notes)),
    )


def timeline(trace: Iterable[Event]) -> Timeline:
    calls, last = [], 0.0
    for event in trace:
        last = max(last, float(event.get("ms") or 0))
        if event.get("event") != "llm.call":
            continue
        latency = float(event.get("latency_ms") or 0)
        calls.append(
            LLMCallView(
                seq=int(event.get("seq") or 0),
                task=event.get("task"),
                purpose=str(event.get("purpose")),
                tool=event.get("tool"),
                # the event is written when the call returns
                start_ms=max(float(event.get("ms") or 0) - latency, 0.0),
                latency_ms=latency,
                prompt_tokens=int(event.get("prompt_tokens") or 0),
                completion_tokens=int(event.get("completion_tokens") or 0),
                cached=bool(event.get("cached")),
                outcome=str(event.get("outcome") or "ok"),
                error=event.get("error"),
            )
        )
    return Timeline(calls, last)


def _task_view(
    task: Mapping[str, Any], by_task: Mapping[str | None, list[Event]], terminal: set[Any]
) -> TaskView:
    task_no = str(task["task_no"])
    events = by_task.get(task_no, [])
    view = TaskView(
        task_no=task_no,
        prompt=str(task.get("prompt", "")),
        status="skipped" if task.get("skipped") else str(task.get("status", "")),
        prompt_type=task.get("prompt_type"),
        owner=task.get("owner"),
        conditional=bool(task.get("conditional")),
        required_tools=list(task.get("required_tools") or []),
        pair=_pair_half(task_no, task.get("owner"), by_task),
    )
    runs = {e.get("key"): e for e in events if e.get("event") in ("tool.run", "tool.error")}
    asked = {e.get("tool"): e for e in events if e.get("event") == "clarification.ask"}
    retrievals = {e.get("tool"): e for e in events if e.get("event") == "retrieval"}
    for tool in task.get("tools") or []:
        shown = _tool_view(tool, runs.get(tool.get("key")), asked, terminal)
        _add_retrieval(shown, retrievals.get(tool.get("name")))
        view.tools.append(shown)
    round_events = sorted(
        (e for task_events in by_task.values() for e in task_events),
        key=lambda e: int(e.get("seq") or 0),
    )
    for event in events:
        _annotate(view, event, round_events)
    view.children = [_task_view(child, by_task, terminal) for child in task.get("children") or []]
    return view


def _tool_view(
    tool: Mapping[str, Any],
    run: Event | None,
    asked: Mapping[Any, Event],
    terminal: set[Any],
) -> ToolView:
    reason = str(tool.get("reason") or "")
    run = run or {}
    asked_here = asked.get(tool.get("name"), {}) if tool.get("status") == "asked" else {}
    return ToolView(
        name=str(tool["name"]),
        key=str(tool.get("key", "")),
        status=str(tool.get("status", "")),
        reason=reason,
        reason_text=REASON_TEXT.get(reason, reason or "no reason recorded"),
        items=int(tool.get("items") or 0),
        guaranteed=bool(tool.get("guaranteed")),
        sources=int(run.get("sources") or 0),
        gave_answer=tool.get("key") in terminal,
        consumer=bool(run.get("consumer")),
        error=run.get("error") if run.get("event") == "tool.error" else None,
        question=asked_here.get("question"),
    )


def _add_retrieval(tool: ToolView, event: Event | None) -> None:
    """The pages a retrieval-kind tool ranked on this task (its `retrieval` trace event:
    `{tool, corpus, query, pages: [{rank, document, page, heading, score}]}`), best first."""
    if event is None:
        return
    pages = [dict(page) for page in event.get("pages") or [] if isinstance(page, Mapping)]
    tool.retrieved = sorted(pages, key=lambda page: page.get("rank") or 0)
    tool.query = event.get("query")
    if event.get("searched"):  # restated by the LLM (`rewrite`) or widened by `synonyms:`
        tool.query = f"{tool.query}” searched as “{event['searched']}"
    tool.corpus = event.get("corpus")


def _annotate(view: TaskView, event: Event, round_events: Sequence[Event]) -> None:
    kind = event.get("event")
    if kind == "task.start" and event.get("resumed"):
        view.notes.append("resumed: the tools that finished before are not run again")
    elif kind == "coordinator.run":
        _coordinator_note(view, event)
    elif kind == "coordinator.skip" and event.get("reason") != "applied":
        reason = SKIP_REASONS.get(str(event.get("reason")), str(event.get("reason")))
        view.notes.append(f"coordinator {event.get('coordinator')} did not run: {reason}")
    elif kind == "coordinator.error":
        view.problems.append(f"coordinator {event.get('coordinator')} failed: {event.get('error')}")
    elif kind == "subtask.decision":
        view.decision = _decision_note(event)
    elif kind == "activation":
        view.notes.append(_activation_note(event))
    elif kind == "gatekeeper":
        view.notes.append(_gatekeeper_note(event, round_events))
    elif kind == "deep_fallback":
        runs = "ran" if event.get("run") else "did not run"
        view.notes.append(f"deep search {event.get('coordinator')} {runs}: {event.get('reason')}")
    elif kind == "clarification.resume":
        view.notes.append(f"{event.get('tool')} ran again with the answer {event.get('answer')!r}")
    elif kind == "warning":
        view.problems.append(str(event.get("message")))
    elif kind == "tool.error":
        view.problems.append(f"{event.get('tool')} failed: {event.get('error')}")


def _coordinator_note(view: TaskView, event: Event) -> None:
    name = event.get("coordinator")
    if not event.get("changed"):
        view.notes.append(f"coordinator {name} looked at the task: not relevant, unchanged")
        return
    made = event.get("subtasks") or []
    what = f"made subtasks {', '.join(made)}" if made else "changed the task"
    if event.get("appended"):
        what += " and appended to the task"
    view.notes.append(f"coordinator {name} {what}")


def _decision_note(event: Event) -> str:
    """Why a conditional subtask was skipped or run, by the rule that decided it (`run_if`,
    `skip_if_found`, the deep search's neighbour search), then whose rule it is."""
    done = {"skip": "skipped", "run": "run"}.get(str(event.get("decision")), event.get("decision"))
    who = event.get("decided_by")
    whose = f"the rule of coordinator {who}" if who else "no rule: a subtask runs by default"
    return f"{done}: {event.get('reason')} ({whose})"


def _activation_note(event: Event) -> str:
    if event.get("mode") == "forced":
        return "forced tools only: no suitability call on this subtask"
    candidates = [str(name) for name in event.get("candidates") or []]
    text = f"activation candidates: {', '.join(candidates) or 'none'}"
    answers = event.get("suitability") or {}
    if answers:
        verdicts = ", ".join(f"{tool} {'yes' if yes else 'no'}" for tool, yes in answers.items())
        text += f"; suitability call: {verdicts}"
    activated = {str(entry.get("tool")) for entry in event.get("activated") or []}
    left_out = [name for name in candidates if name not in activated]
    if left_out:  # a candidate is only one that might have run: say which did not
        text += f"; not activated, so did not run: {', '.join(left_out)}"
    if event.get("ignored"):
        text += f"; ignored {', '.join(map(str, event['ignored']))}"
    return text


def _gatekeeper_note(event: Event, events: Sequence[Event]) -> str:
    """The gatekeeper's verdict, said for what it is: a judgement on whether the context covers
    the question (by the LLM, by the offline provider's word check, or by the coverage rule),
    over what it read; never a check that the answer is right."""
    verdict = "enough" if event.get("enough") else "not enough"
    reason = f": {event['reason']}" if event.get("reason") else ""
    read = _context_read(events, before=int(event.get("seq") or 0))
    return (
        f"{_gatekeeper_label(event, events)} judged the context {verdict} to answer from"
        f" ({read}){reason}. It judges whether the pages cover the question, not whether the"
        " answer is right"
    )


def _gatekeeper_label(event: Event, events: Sequence[Event]) -> str:
    mode = str(event.get("mode"))
    if mode == "rule":
        return "gatekeeper (coverage rule, no LLM)"
    calls = [
        e
        for e in events
        if e.get("event") == "llm.call"
        and e.get("purpose") == "gatekeeper"
        and e.get("task") == event.get("task")
        and int(e.get("seq") or 0) < int(event.get("seq") or 0)
    ]
    provider = str(calls[-1].get("provider")) if calls else ""
    if provider == "offline":
        return "gatekeeper (the offline provider's word check, standing in for the LLM)"
    if calls and calls[-1].get("cached"):
        return f"gatekeeper ({mode}, a cached reply)"
    return f"gatekeeper ({mode}{', ' + provider if provider else ''})"


def _context_read(events: Sequence[Event], before: int) -> str:
    """What the context held when the gatekeeper read it: the results of the tools that ran
    before it in the round, and the sources (pages, rows) they cite."""
    runs = [
        e
        for e in events
        if e.get("event") == "tool.run" and not e.get("empty") and int(e.get("seq") or 0) < before
    ]
    sources = sum(int(e.get("sources") or 0) for e in runs)
    results = f"{len(runs)} tool result{'' if len(runs) == 1 else 's'}"
    return f"{results} citing {sources} source{'' if sources == 1 else 's'}"


def _pair_half(
    task_no: str, owner: str | None, by_task: Mapping[str | None, list[Event]]
) -> str | None:
    half = task_no.rsplit(".", 1)[-1]
    if half not in PAIR_HALVES or owner is None:
        return None
    parent = task_no.rsplit(".", 2)[0]
    fallback = any(
        e.get("event") == "deep_fallback" and e.get("coordinator") == owner
        for e in by_task.get(parent, [])
    )
    return PAIR_HALVES[half] if fallback else None
