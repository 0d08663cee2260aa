"""The trace in words (runner.trace.why): every event has its entry, and each sentence or
label a face shows of a trace is written there once, so that changing it there changes every
face that shows it (`runner run`'s task tree, `runner explain`, the playground's Why page)."""

from __future__ import annotations

from typing import Any

import pytest

from runner.explain.session import describe_event
from runner.playground.why import round_view
from runner.render import tool_label, tracebacks
from runner.trace import why
from runner.trace.events import EVENT_TYPES, Unreadable, read_trace


def test_every_event_kind_has_a_why_entry() -> None:
    """Teaching runner a new event: its type in runner.trace.events and its words in
    runner.trace.why; the faces need nothing more (they read both)."""
    assert set(why.WHY) == {*EVENT_TYPES.values(), Unreadable}


def test_every_event_of_a_real_round_has_a_sentence_and_a_note_or_none(traces) -> None:
    for events in traces:
        typed = read_trace(events)
        for event in typed:
            assert why.line(event).strip()
            said = why.note(event, typed)
            assert said is None or said.text.strip()


def test_no_sentence_or_note_names_an_engine_method(traces) -> None:
    """A skipped conditional subtask is explained by its rule and whose it is, never by the
    method that decided it (`decide_conditional`)."""
    said = []
    for events in traces:
        typed = read_trace(events)
        said += [why.line(event) for event in typed]
        said += [n.text for n in (why.note(event, typed) for event in typed) if n is not None]
    decisions = [text for text in said if text.startswith("skipped: ")]
    assert decisions, "the comparison round skips its handbook subtasks"
    assert all(text.endswith(")") and "(the rule of coordinator " in text for text in decisions)
    assert any("(the rule of coordinator compare_products)" in text for text in decisions)
    assert not [text for text in said if "decide_conditional" in text]


def _event(event: str, task: str | None = "1", **fields: Any) -> dict[str, Any]:
    return {"seq": 1, "ms": 0.0, "event": event, "task": task, **fields}


FORCED = _event(
    "activation",
    mode="forced",
    candidates=["lookup"],
    activated=[{"tool": "lookup", "reason": "forced"}],
)
TOOL = {"name": "lookup", "key": "1:lookup", "reason": "forced", "status": "done", "items": 1}


def test_a_tools_reason_label_is_the_task_trees_and_explains(monkeypatch) -> None:
    monkeypatch.setitem(why.TOOL_REASON_LABELS, "forced", "required by the subtask")
    assert "— required by the subtask" in tool_label(TOOL).plain
    assert describe_event(FORCED).endswith("lookup (required by the subtask)")


def test_a_rounds_kind_is_said_alike_by_explain_and_the_why_page(monkeypatch) -> None:
    monkeypatch.setitem(why.ROUND_KINDS, "fresh", "a first message")
    start = _event("round.start", None, session="s", round=1, kind="fresh", message="hi")
    assert describe_event(start) == "Round 1: a first message: 'hi'"
    assert round_view({"round": 1, "outcome": "answer"}, [start]).kind == "a first message"


def test_a_skipped_coordinators_reason_is_said_alike_by_explain_and_the_why_page(
    monkeypatch,
) -> None:
    monkeypatch.setitem(why.SKIP_REASONS, "depth", "too deep")
    skip = _event("coordinator.skip", coordinator="planner", reason="depth")
    assert describe_event(skip) == "coordinator planner skipped: too deep"
    tasks = {"task_no": "1", "prompt": "q", "status": "done", "tools": []}
    view = round_view({"round": 1, "outcome": "answer", "tasks": tasks}, [skip])
    assert view.tree is not None and view.tree.notes == [
        "coordinator planner did not run: too deep"
    ]


def test_the_why_pages_reason_text_is_the_trace_modules(monkeypatch) -> None:
    monkeypatch.setitem(why.TOOL_REASON_TEXT, "forced", "the subtask names it")
    tasks = {"task_no": "1", "prompt": "q", "status": "done", "tools": [TOOL]}
    view = round_view({"round": 1, "outcome": "answer", "tasks": tasks}, [FORCED])
    assert view.tree is not None and view.tree.tools[0].reason_text == "the subtask names it"


def test_what_failed_is_said_beside_each_traceback() -> None:
    events = [
        _event("tool.error", tool="boom", key="1:boom", error="E", traceback="tb 1"),
        _event("coordinator.error", coordinator="plan", error="E", traceback="tb 2"),
        _event("tool.run", tool="ok", key="1:ok", result="context", empty=False),
        _event("round.end", None, outcome="error", error="it broke", traceback="tb 3"),
    ]
    assert tracebacks(events) == [
        ("tool 'boom' on task 1", "tb 1"),
        ("coordinator 'plan' on task 1", "tb 2"),
        ("the round's error: it broke", "tb 3"),
    ]


@pytest.mark.parametrize(
    ("event", "line"),
    [
        (_event("task.end", status="waiting", stopped_by="clarification"),
         "task 1 waiting, stopped by the clarification"),
        (_event("deep_fallback", coordinator="deep", run=False, reason="enough"),
         "deep fallback deep does not run: enough (C28)"),
        (_event("task.end"), "task.end: {}"),  # lacks its status: said as it was written
    ],
)  # fmt: skip
def test_an_event_is_one_sentence(event: dict[str, Any], line: str) -> None:
    assert describe_event(event) == line
