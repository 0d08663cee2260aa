"""`runner explain --session ID`: why a stored session did what it did, round by round.

Each trace event becomes a sentence that says what happened and why, citing the rule
(C1–C33, stated in docs/orchestration.md) behind it (the sentences are runner.trace.why's);
`--sessions` lists the stored sessions.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from runner.trace import why
from runner.trace.events import LLMCall, TaskStart, read_event, read_trace
from runner.trace.why import shorten

if TYPE_CHECKING:
    from runner.sessions import RoundRecord, Store


def session_lines(store: Store) -> list[str]:
    """One line per stored session: id, status, rounds, last change, pipeline."""
    sessions = store.sessions()
    if not sessions:
        return [f"no sessions in {store.location}"]  # a file, or a URL without its password
    lines = []
    for info in sessions:
        when = datetime.datetime.fromtimestamp(info.updated).strftime("%Y-%m-%d %H:%M")
        lines.append(
            f"{info.id}  {info.status:<11}  {info.rounds} round{'s' if info.rounds != 1 else ''}"
            f"  {when}  {info.pipeline_path}"
        )
    return lines


def explain_session(store: Store, session_id: str, *, llm_calls: bool) -> Iterator[str]:
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
    for event in read_trace(record.trace):
        if isinstance(event, LLMCall) and not llm_calls:
            continue
        if isinstance(event, TaskStart) and event.task is not None:
            depth[event.task] = int(event.depth)
        task = event.task
        indent = "" if task is None else "  " * (depth.get(task, 0) + 1)
        if not isinstance(event, TaskStart) and task is not None:
            indent += "  "
        yield indent + why.line(event)
    summary = record.result
    outcome = record.outcome
    if outcome == "answer":
        yield f"answer: {shorten(summary.get('answer') or '')}"
    elif outcome == "clarification":
        yield f"question: {summary.get('question')}"
    else:
        yield f"error: {summary.get('error')}"


def describe_event(event: Mapping[str, Any]) -> str:
    """One trace event as a sentence that says what happened and why (runner.trace.why)."""
    return why.line(read_event(event))
