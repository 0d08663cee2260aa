"""`runner explain --session ID`: why a stored session did what it did, round by round.

Each trace event becomes a sentence that says what happened and why, citing the rule
(C1–C33, stated in docs/orchestration.md) behind it; `--sessions` lists the stored sessions.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from runner.render import shorten

if TYPE_CHECKING:
    from runner.sessions import RoundRecord, SessionStore

Event = Mapping[str, Any]


def session_lines(store: SessionStore) -> list[str]:
    """One line per stored session: id, status, rounds, last change, pipeline."""
    sessions = store.sessions()
    if not sessions:
        return [f"no sessions in {store.path}"]
    lines = []
    for info in sessions:
        when = datetime.datetime.fromtimestamp(info.updated).strftime("%Y-%m-%d %H:%M")
        lines.append(
            f"{info.id}  {info.status:<11}  {info.rounds} round{'s' if info.rounds != 1 else ''}"
            f"  {when}  {info.pipeline_path}"
        )
    return lines


def explain_session(store: SessionStore, session_id: str, *, llm_calls: bool) -> Iterator[str]:
    state, _version = store.load(session_id)
    rounds = store.rounds(session_id)
    yield f"session {session_id} · pipeline {state.pipeline_path} · {len(rounds)} round(s)"
    for record in rounds:
        yield ""
        yield from explain_round(record, llm_calls=llm_calls)
    if state.interrupted:
        yield ""
        yield (
            f"an interrupted round on {state.active_message!r} is stored: the next "
            "`runner run`/`runner chat` with this session finishes it first"
        )
    elif state.waiting and state.pending is not None:
        yield ""
        yield (
            f"waiting for the answer to {state.pending.question!r} (asked by "
            f"{state.pending.tool} on task {state.pending.task_no})"
        )


def explain_round(record: RoundRecord, *, llm_calls: bool) -> Iterator[str]:
    depth: dict[str, int] = {}
    for event in record.trace:
        if event.get("event") == "llm.call" and not llm_calls:
            continue
        if event.get("event") == "task.start" and event.get("task") is not None:
            depth[event["task"]] = int(event.get("depth", 0))
        text = describe_event(event)
        task = event.get("task")
        indent = "" if task is None else "  " * (depth.get(task, 0) + 1)
        if event.get("event") != "task.start" and task is not None:
            indent += "  "
        yield indent + text
    summary = record.result
    outcome = record.outcome
    if outcome == "answer":
        yield f"answer: {shorten(summary.get('answer') or '')}"
    elif outcome == "clarification":
        yield f"question: {summary.get('question')}"
    else:
        yield f"error: {summary.get('error')}"


ROUND_KINDS = {
    "fresh": "a new message",
    "answer": "the answer to the pending question (C24)",
    "resume": "resuming the interrupted round",
}
SKIP_REASONS = {
    "applied": "it already had its chance on this task or an ancestor (C11–C12)",
    "depth": "the task is at the depth limit (C4)",
    "prompt_type": "the task's prompt type is not one of its prompt_types",
}


def describe_event(event: Event) -> str:
    """One event as a sentence that says what happened and why."""
    describe = _DESCRIBERS.get(str(event.get("event")))
    if describe is None:
        fields = {k: v for k, v in event.items() if k not in ("seq", "ms", "event", "task")}
        return f"{event.get('event')}: {fields}"
    return describe(event)


def _round_start(e: Event) -> str:
    kind = ROUND_KINDS.get(e.get("kind", ""), e.get("kind", ""))
    return f"Round {e.get('round')}: {kind}: {e.get('message', '')!r}"


def _task_start(e: Event) -> str:
    details = []
    if e.get("owner"):
        details.append(f"made by {e['owner']}")
    if e.get("required_tools"):
        details.append("required tools " + ", ".join(e["required_tools"]))
    if e.get("conditional"):
        details.append("conditional")
    if e.get("prompt_type"):
        details.append(f"type {e['prompt_type']}")
    if e.get("resumed"):
        details.append("resumed: finished tools are not run again")
    suffix = f" ({'; '.join(details)})" if details else ""
    return f"task {e.get('task')}: {shorten(e.get('prompt', ''))!r}{suffix}"


def _task_end(e: Event) -> str:
    stopped = f", stopped by the {e['stopped_by']}" if e.get("stopped_by") else ""
    return f"task {e.get('task')} {e.get('status')}{stopped}"


def _coordinator_run(e: Event) -> str:
    name = e.get("coordinator")
    if not e.get("changed"):
        return f"coordinator {name} ran: not relevant, the task is unchanged (C1)"
    changes = []
    if e.get("appended"):
        changes.append("appended to the task prompt")
    if e.get("subtasks"):
        changes.append("made subtasks " + ", ".join(e["subtasks"]))
    return f"coordinator {name} decomposed the task (C2): {'; '.join(changes) or 'changed it'}"


def _coordinator_skip(e: Event) -> str:
    reason = SKIP_REASONS.get(e.get("reason", ""), e.get("reason", ""))
    return f"coordinator {e.get('coordinator')} skipped: {reason}"


def _coordinator_error(e: Event) -> str:
    return (
        f"coordinator {e.get('coordinator')} failed: {e.get('error')}; the task was restored "
        "and the other coordinators still ran (C10)"
    )


def _subtask_decision(e: Event) -> str:
    who = e.get("decided_by") or "nobody (default RUN)"
    return (
        f"conditional subtask {e.get('task')}: {str(e.get('decision')).upper()}, decided by "
        f"{who}: {e.get('reason')} (C16)"
    )


def _activation(e: Event) -> str:
    activated = ", ".join(
        f"{item['tool']} ({item['reason'].replace('_', ' ')})" for item in e.get("activated", [])
    )
    if e.get("mode") == "forced":
        text = "activation forced by required_tool_names, no suitability test (C13–C14): "
        text += activated or "nothing"
    else:
        candidates = ", ".join(e.get("candidates", [])) or "none"
        text = f"activation: candidates {candidates}"
        answers = e.get("suitability")
        if answers:
            text += "; suitability " + ", ".join(
                f"{tool} {'yes' if yes else 'no'}" for tool, yes in answers.items()
            )
        text += f"; activated {activated or 'nothing'}"
    if e.get("ignored"):
        text += f"; ignored {', '.join(e['ignored'])}"
    return text


def _tool_run(e: Event) -> str:
    if e.get("empty"):
        what = "found nothing"
    else:
        what = f"{e.get('result')}, {e.get('chars', 0)} chars, {e.get('sources', 0)} source(s)"
    consumer = ", with the context buffer" if e.get("consumer") else ""
    return f"{e.get('tool')} ran ({e.get('reason', '?')}{consumer}): {what} → {e.get('key')}"


def _retrieval(e: Event) -> str:
    pages = e.get("pages") or []
    ranked = "; ".join(
        f"{p.get('rank')}. {p.get('document')} p. {p.get('page')}"
        + ("" if p.get("score") is None else f" ({p['score']:.3f})")
        for p in pages
    )
    count = f"{len(pages)} page{'' if len(pages) == 1 else 's'}"
    return (
        f"{e.get('tool')} retrieved {count} from {e.get('corpus')} for "
        f"{shorten(str(e.get('query', '')))!r}" + (f": {ranked}" if ranked else "")
    )


def _tool_error(e: Event) -> str:
    return f"{e.get('tool')} failed: {e.get('error')} ({e.get('key')})"


def _clarification_ask(e: Event) -> str:
    return f"{e.get('tool')} asked {e.get('question')!r}; the round ends here (C24)"


def _clarification_resume(e: Event) -> str:
    return f"{e.get('tool')} runs again with the answer {e.get('answer')!r} (C24)"


def _terminal(e: Event) -> str:
    return f"{e.get('tool')} gave the terminal answer; the round ends with it (C25)"


def _gatekeeper(e: Event) -> str:
    verdict = "enough" if e.get("enough") else "not enough"
    return (
        f"gatekeeper ({e.get('mode')}): {verdict} context in {e.get('passages', 0)} passage(s)"
        f"{': ' + str(e['reason']) if e.get('reason') else ''} (C27)"
    )


def _deep_fallback(e: Event) -> str:
    runs = "runs" if e.get("run") else "does not run"
    return f"deep fallback {e.get('coordinator')} {runs}: {e.get('reason')} (C28)"


def _llm_call(e: Event) -> str:
    tool = f" for {e['tool']}" if e.get("tool") else ""
    extra = ", cached" if e.get("cached") else ""
    if e.get("outcome") not in (None, "ok"):
        extra += f", {e['outcome']}: {e.get('error', '')}"
    task = f" on task {e['task']}" if e.get("task") else ""
    return (
        f"LLM {e.get('purpose')}{tool}{task} ({e.get('provider')}, {e.get('latency_ms')} ms{extra})"
    )


def _warning(e: Event) -> str:
    return f"warning: {e.get('message')}"


def _round_end(e: Event) -> str:
    error = f": {e['error']}" if e.get("error") else ""
    return f"round ended: {e.get('outcome')}{error}"


_DESCRIBERS: dict[str, Callable[[Event], str]] = {
    "round.start": _round_start,
    "task.start": _task_start,
    "task.end": _task_end,
    "coordinator.run": _coordinator_run,
    "coordinator.skip": _coordinator_skip,
    "coordinator.error": _coordinator_error,
    "subtask.decision": _subtask_decision,
    "activation": _activation,
    "tool.run": _tool_run,
    "tool.error": _tool_error,
    "retrieval": _retrieval,
    "clarification.ask": _clarification_ask,
    "clarification.resume": _clarification_resume,
    "terminal": _terminal,
    "gatekeeper": _gatekeeper,
    "deep_fallback": _deep_fallback,
    "llm.call": _llm_call,
    "warning": _warning,
    "round.end": _round_end,
}
