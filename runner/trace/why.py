"""Why a round did what it did, in words: every sentence, reason and label a face shows of a
trace, written once.

`runner explain --session` writes each event as a line (`line`); the playground's Why page
annotates each task with notes, problems and the decision on a conditional subtask (`note`);
`runner run`'s task tree names the reason each tool ran (`tool_reason_label`), the Why page the
same reason as a sentence (`TOOL_REASON_TEXT`); `--debug` says what failed beside each
traceback (`what_failed`). Every event of `EVENTS` has an entry in `WHY` (a test checks it):
teaching runner a new event is declaring it in `runner.trace.events` and saying it here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, Literal

from runner.trace.events import (
    ActivationChoice,
    ClarificationAsk,
    ClarificationResume,
    CoordinatorError,
    CoordinatorRun,
    CoordinatorSkip,
    DeepFallbackRun,
    GatekeeperVerdict,
    LLMCall,
    Retrieval,
    RoundEnd,
    RoundStart,
    SubtaskChoice,
    TaskEnd,
    TaskStart,
    Terminal,
    ToolError,
    ToolRun,
    TraceEvent,
    TraceWarning,
    Unreadable,
)

# --- labels ----------------------------------------------------------------------------------

# What the message of a round was (round.start's `kind`).
ROUND_KINDS = {
    "fresh": "a new message",
    "answer": "the answer to the pending question (C24)",
    "resume": "resuming the interrupted round",
}

# Why a coordinator did not run on a task (coordinator.skip's `reason`).
SKIP_REASONS = {
    "applied": "it already had its chance on this task or an ancestor (C11–C12)",
    "depth": "the task is at the depth limit (C4)",
    "prompt_type": "the task's prompt type is not one of its prompt_types",
}

# Why a tool ran (the engine's activation reasons), as the task tree names it ...
TOOL_REASON_LABELS = {
    "forced": "forced",
    "suitability": "suitability",
    "rule": "rule",
    "always": "always",
    "retrieval": "retrieval",
    "after_subtasks": "after subtasks",
    "deep_fallback": "deep fallback",
    "decompose_failed": "not activated (its decomposition failed)",
}

# ... and as a sentence a domain author reads on the Why page.
TOOL_REASON_TEXT = {
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


def tool_reason_label(reason: str | None) -> str:
    return TOOL_REASON_LABELS.get(reason or "", reason or "?")


def tool_reason_text(reason: str) -> str:
    return TOOL_REASON_TEXT.get(reason, reason or "no reason recorded")


def task_status(task: Mapping[str, Any]) -> str:
    """A result's task's status as faces show it: a skipped conditional subtask is skipped."""
    return "skipped" if task.get("skipped") else str(task.get("status", ""))


def shorten(text: str, limit: int = 70) -> str:
    """One line, cut to `limit` characters with an ellipsis."""
    one_line = " ".join(str(text).split())
    return one_line if len(one_line) <= limit else one_line[: limit - 1] + "…"


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def _verdicts(answers: Mapping[str, bool]) -> str:
    """The suitability call's answers: `troubleshooter yes, warranty_check no`."""
    return ", ".join(f"{tool} {'yes' if yes else 'no'}" for tool, yes in answers.items())


# --- what a face shows on a task -------------------------------------------------------------


@dataclass(frozen=True)
class Note:
    """What the Why page says of an event on its task: a note, a problem, or the decision on a
    conditional subtask."""

    text: str
    kind: Literal["note", "problem", "decision"] = "note"


@dataclass(frozen=True)
class Why:
    """How an event is said: `line`, one sentence for `runner explain`; `note`, what the Why
    page says on its task (None: nothing there, the tree or the timeline shows it already),
    from the event and the round's events in order."""

    line: Callable[[Any], str]
    note: Callable[[Any, Sequence[TraceEvent]], Note | None] | None = None


def line(event: TraceEvent) -> str:
    """One event as a sentence that says what happened and why."""
    return WHY[type(event)].line(event)


def note(event: TraceEvent, events: Sequence[TraceEvent]) -> Note | None:
    """What the Why page says of the event on its task, if anything; `events`: the round's."""
    say = WHY[type(event)].note
    return None if say is None else say(event, events)


def what_failed(event: TraceEvent) -> str:
    """What an event with a traceback says failed (`runner run --debug` prints it above)."""
    if isinstance(event, ToolError):
        return f"tool {event.tool!r} on task {event.task}"
    if isinstance(event, CoordinatorError):
        return f"coordinator {event.coordinator!r} on task {event.task}"
    if isinstance(event, SubtaskChoice):
        return f"the decision on conditional subtask {event.task} by {event.decided_by!r}"
    return f"the round's error: {value_of(event, 'error')}"


def traceback_of(event: TraceEvent) -> str | None:
    """The traceback an event recorded (a tool's, a coordinator's, a decision's, the round's)."""
    text = value_of(event, "traceback")
    return text if isinstance(text, str) else None


def value_of(event: TraceEvent, name: str) -> Any:
    """A field of the event, whether its class declares it or not (None when it has none)."""
    if isinstance(event, Unreadable):
        return event.values.get(name)
    if name in {f.name for f in fields(event)}:
        return getattr(event, name)
    return event.extra.get(name)


# --- each event ------------------------------------------------------------------------------


def _round_start(e: RoundStart) -> str:
    return f"Round {e.round}: {ROUND_KINDS.get(e.kind, e.kind)}: {e.message!r}"


def _task_start(e: TaskStart) -> str:
    details = []
    if e.owner:
        details.append(f"made by {e.owner}")
    if e.required_tools:
        details.append("required tools " + ", ".join(e.required_tools))
    if e.conditional:
        details.append("conditional")
    if e.prompt_type:
        details.append(f"type {e.prompt_type}")
    if e.resumed:
        details.append("resumed: finished tools are not run again")
    suffix = f" ({'; '.join(details)})" if details else ""
    return f"task {e.task}: {shorten(e.prompt)!r}{suffix}"


def _task_start_note(e: TaskStart, _events: Sequence[TraceEvent]) -> Note | None:
    return Note("resumed: the tools that finished before are not run again") if e.resumed else None


def _task_end(e: TaskEnd) -> str:
    stopped = f", stopped by the {e.stopped_by}" if e.stopped_by else ""
    return f"task {e.task} {e.status}{stopped}"


def _coordinator_run(e: CoordinatorRun) -> str:
    name = e.coordinator
    if not e.changed:
        return f"coordinator {name} ran: not relevant, the task is unchanged (C1)"
    changes = []
    if e.appended:
        changes.append("appended to the task prompt")
    if e.subtasks:
        changes.append("made subtasks " + ", ".join(e.subtasks))
    return f"coordinator {name} decomposed the task (C2): {'; '.join(changes) or 'changed it'}"


def _coordinator_run_note(e: CoordinatorRun, _events: Sequence[TraceEvent]) -> Note:
    name = e.coordinator
    if not e.changed:
        return Note(f"coordinator {name} looked at the task: not relevant, unchanged")
    made = e.subtasks or []
    what = f"made subtasks {', '.join(made)}" if made else "changed the task"
    if e.appended:
        what += " and appended to the task"
    return Note(f"coordinator {name} {what}")


def _skip_reason(e: CoordinatorSkip) -> str:
    return SKIP_REASONS.get(e.reason, e.reason)


def _coordinator_skip(e: CoordinatorSkip) -> str:
    return f"coordinator {e.coordinator} skipped: {_skip_reason(e)}"


def _coordinator_skip_note(e: CoordinatorSkip, _events: Sequence[TraceEvent]) -> Note | None:
    if e.reason == "applied":  # said on the task where it had its chance
        return None
    return Note(f"coordinator {e.coordinator} did not run: {_skip_reason(e)}")


def _coordinator_error(e: CoordinatorError) -> str:
    return (
        f"coordinator {e.coordinator} failed: {e.error}; the task was restored "
        "and the other coordinators still ran (C10)"
    )


def _coordinator_error_note(e: CoordinatorError, _events: Sequence[TraceEvent]) -> Note:
    return Note(f"coordinator {e.coordinator} failed: {e.error}", "problem")


def _subtask_decision(e: SubtaskChoice) -> str:
    who = e.decided_by or "nobody (default RUN)"
    return (
        f"conditional subtask {e.task}: {str(e.decision).upper()}, decided by "
        f"{who}: {e.reason} (C16)"
    )


def _subtask_decision_note(e: SubtaskChoice, _events: Sequence[TraceEvent]) -> Note:
    """Why a conditional subtask was skipped or run, by the rule that decided it (`run_if`,
    `skip_if_found`, the deep search's neighbour search), then whose rule it is."""
    done = {"skip": "skipped", "run": "run"}.get(e.decision, e.decision)
    who = e.decided_by
    whose = f"the rule of coordinator {who}" if who else "no rule: a subtask runs by default"
    return Note(f"{done}: {e.reason} ({whose})", "decision")


def _activation(e: ActivationChoice) -> str:
    activated = ", ".join(f"{item.tool} ({tool_reason_label(item.reason)})" for item in e.activated)
    if e.mode == "forced":
        text = "activation forced by required_tool_names, no suitability test (C13–C14): "
        text += activated or "nothing"
    else:
        text = f"activation: candidates {', '.join(e.candidates) or 'none'}"
        if e.suitability:
            text += "; suitability " + _verdicts(e.suitability)
        text += f"; activated {activated or 'nothing'}"
    if e.ignored:
        text += f"; ignored {', '.join(e.ignored)}"
    return text


def _activation_note(e: ActivationChoice, _events: Sequence[TraceEvent]) -> Note:
    if e.mode == "forced":
        return Note("forced tools only: no suitability call on this subtask")
    candidates = [str(name) for name in e.candidates]
    text = f"activation candidates: {', '.join(candidates) or 'none'}"
    if e.suitability:
        text += f"; suitability call: {_verdicts(e.suitability)}"
    activated = {item.tool for item in e.activated}
    left_out = [name for name in candidates if name not in activated]
    if left_out:  # a candidate is only one that might have run: say which did not
        text += f"; not activated, so did not run: {', '.join(left_out)}"
    if e.ignored:
        text += f"; ignored {', '.join(map(str, e.ignored))}"
    return Note(text)


def _tool_run(e: ToolRun) -> str:
    if e.empty:
        what = "found nothing"
    else:
        what = f"{e.result}, {e.chars or 0} chars, {e.sources or 0} source(s)"
    consumer = ", with the context buffer" if e.consumer else ""
    reason = "?" if e.reason is None else e.reason
    return f"{e.tool} ran ({reason}{consumer}): {what} → {e.key}"


def _tool_error(e: ToolError) -> str:
    return f"{e.tool} failed: {e.error} ({e.key})"


def _tool_error_note(e: ToolError, _events: Sequence[TraceEvent]) -> Note:
    return Note(f"{e.tool} failed: {e.error}", "problem")


def _retrieval(e: Retrieval) -> str:
    ranked = "; ".join(
        f"{p.rank}. {p.document} p. {p.page}" + ("" if p.score is None else f" ({p.score:.3f})")
        for p in e.pages
    )
    return (
        f"{e.tool} retrieved {_plural(len(e.pages), 'page')} from {e.corpus} for "
        f"{shorten(str(e.query))!r}" + (f": {ranked}" if ranked else "")
    )


def retrieval_query(e: Retrieval) -> str:
    """What a retrieval searched for, as the Why page quotes it: with what it searched instead,
    when the LLM restated it (`rewrite`) or `synonyms:` widened it."""
    return f"{e.query}” searched as “{e.searched}" if e.searched else e.query


def _clarification_ask(e: ClarificationAsk) -> str:
    return f"{e.tool} asked {e.question!r}; the round ends here (C24)"


def _clarification_resume(e: ClarificationResume) -> str:
    return f"{e.tool} runs again with the answer {e.answer!r} (C24)"


def _clarification_resume_note(e: ClarificationResume, _events: Sequence[TraceEvent]) -> Note:
    return Note(f"{e.tool} ran again with the answer {e.answer!r}")


def _terminal(e: Terminal) -> str:
    return f"{e.tool} gave the terminal answer; the round ends with it (C25)"


def _gatekeeper(e: GatekeeperVerdict) -> str:
    verdict = "enough" if e.enough else "not enough"
    return (
        f"gatekeeper ({e.mode}): {verdict} context in {e.passages or 0} passage(s)"
        f"{': ' + str(e.reason) if e.reason else ''} (C27)"
    )


def _gatekeeper_note(e: GatekeeperVerdict, events: Sequence[TraceEvent]) -> Note:
    """The gatekeeper's verdict, said for what it is: a judgement on whether the context covers
    the question (by the LLM, by the offline provider's word check, or by the coverage rule),
    over what it read; never a check that the answer is right."""
    verdict = "enough" if e.enough else "not enough"
    reason = f": {e.reason}" if e.reason else ""
    return Note(
        f"{_gatekeeper_label(e, events)} judged the context {verdict} to answer from"
        f" ({_context_read(events, before=e.seq)}){reason}. It judges whether the pages cover"
        " the question, not whether the answer is right"
    )


def _gatekeeper_label(e: GatekeeperVerdict, events: Sequence[TraceEvent]) -> str:
    if e.mode == "rule":
        return "gatekeeper (coverage rule, no LLM)"
    calls = [
        call
        for call in events
        if isinstance(call, LLMCall)
        and call.purpose == "gatekeeper"
        and call.task == e.task
        and call.seq < e.seq
    ]
    provider = str(calls[-1].provider) if calls else ""
    if provider == "offline":
        return "gatekeeper (the offline provider's word check, standing in for the LLM)"
    if calls and calls[-1].cached:
        return f"gatekeeper ({e.mode}, a cached reply)"
    return f"gatekeeper ({e.mode}{', ' + provider if provider else ''})"


def _context_read(events: Sequence[TraceEvent], before: int) -> str:
    """What the context held when the gatekeeper read it: the results of the tools that ran
    before it in the round, and the sources (pages, rows) they cite."""
    runs = [e for e in events if isinstance(e, ToolRun) and not e.empty and e.seq < before]
    sources = sum(e.sources or 0 for e in runs)
    return f"{_plural(len(runs), 'tool result')} citing {_plural(sources, 'source')}"


def _deep_fallback(e: DeepFallbackRun) -> str:
    runs = "runs" if e.run else "does not run"
    return f"deep fallback {e.coordinator} {runs}: {e.reason} (C28)"


def _deep_fallback_note(e: DeepFallbackRun, _events: Sequence[TraceEvent]) -> Note:
    runs = "ran" if e.run else "did not run"
    return Note(f"deep search {e.coordinator} {runs}: {e.reason}")


def _llm_call(e: LLMCall) -> str:
    tool = f" for {e.tool}" if e.tool else ""
    extra = ", cached" if e.cached else ""
    if e.outcome not in (None, "ok"):
        extra += f", {e.outcome}: {e.error or ''}"
    task = f" on task {e.task}" if e.task else ""
    return f"LLM {e.purpose}{tool}{task} ({e.provider}, {e.latency_ms} ms{extra})"


def _warning(e: TraceWarning) -> str:
    return f"warning: {e.message}"


def _warning_note(e: TraceWarning, _events: Sequence[TraceEvent]) -> Note:
    return Note(str(e.message), "problem")


def _round_end(e: RoundEnd) -> str:
    error = f": {e.error}" if e.error else ""
    return f"round ended: {e.outcome}{error}"


def _unreadable(e: Unreadable) -> str:
    return f"{e.kind}: {dict(e.values)}"


# Every event: its sentence, and what the Why page says of it on its task. No note: retrieval
# (the tool shows its pages), tool.run, terminal and clarification.ask (the tool shows its
# result, answer or question), llm.call (the timeline), task.end, round.start and round.end
# (the page's head and the result).
WHY: Mapping[type[TraceEvent], Why] = {
    RoundStart: Why(_round_start),
    TaskStart: Why(_task_start, _task_start_note),
    TaskEnd: Why(_task_end),
    CoordinatorRun: Why(_coordinator_run, _coordinator_run_note),
    CoordinatorSkip: Why(_coordinator_skip, _coordinator_skip_note),
    CoordinatorError: Why(_coordinator_error, _coordinator_error_note),
    SubtaskChoice: Why(_subtask_decision, _subtask_decision_note),
    ActivationChoice: Why(_activation, _activation_note),
    ToolRun: Why(_tool_run),
    ToolError: Why(_tool_error, _tool_error_note),
    Retrieval: Why(_retrieval),
    ClarificationAsk: Why(_clarification_ask),
    ClarificationResume: Why(_clarification_resume, _clarification_resume_note),
    Terminal: Why(_terminal),
    GatekeeperVerdict: Why(_gatekeeper, _gatekeeper_note),
    DeepFallbackRun: Why(_deep_fallback, _deep_fallback_note),
    LLMCall: Why(_llm_call),
    TraceWarning: Why(_warning, _warning_note),
    RoundEnd: Why(_round_end),
    Unreadable: Why(_unreadable),
}
