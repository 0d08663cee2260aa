"""The trace's types (runner.trace.events): one dataclass per event of `EVENTS`, held to
`schemas/trace.schema.json`, and a real round's events read into them without losing a field."""

from __future__ import annotations

import json
from dataclasses import asdict, is_dataclass
from typing import Any

import pytest

from runner.resources import schema_path
from runner.trace import EVENTS, validate_events
from runner.trace.events import (
    EVENT_TYPES,
    HEAD,
    ActivatedTool,
    ActivationChoice,
    RankedPage,
    Retrieval,
    TaskStart,
    Unreadable,
    body_fields,
    read_event,
    read_trace,
)

SCHEMA = json.loads(schema_path("trace").read_text(encoding="utf-8"))
# each event's `then` block: its properties and required fields
BLOCKS = {block["if"]["properties"]["event"]["const"]: block["then"] for block in SCHEMA["allOf"]}


def test_every_event_the_trace_accepts_has_a_type_and_a_schema_entry() -> None:
    assert set(EVENT_TYPES) == EVENTS
    assert set(SCHEMA["properties"]["event"]["enum"]) == EVENTS
    assert set(BLOCKS) == EVENTS


def test_every_event_has_the_head_the_schema_requires() -> None:
    assert set(SCHEMA["required"]) == {*HEAD, "event"}
    for kind in EVENT_TYPES.values():
        assert {"seq", "ms", "task"} <= {name for name in kind.__dataclass_fields__}


@pytest.mark.parametrize("event", sorted(EVENTS))
def test_an_events_fields_are_its_schema_properties(event: str) -> None:
    names, _required = body_fields(EVENT_TYPES[event])
    properties = set(BLOCKS[event].get("properties", {})) - {"task"}  # `task` is in the head
    assert set(names) == properties


@pytest.mark.parametrize("event", sorted(EVENTS))
def test_an_events_fields_without_a_default_are_its_schema_required_ones(event: str) -> None:
    _names, required = body_fields(EVENT_TYPES[event])
    assert set(required) == set(BLOCKS[event].get("required", [])) - {"task"}


def test_a_real_rounds_events_are_valid_and_each_reads_into_its_own_type(traces) -> None:
    for events in traces:
        assert validate_events(events) == []
        for data, event in zip(events, read_trace(events), strict=True):
            assert type(event) is EVENT_TYPES[data["event"]], getattr(event, "problem", "")


def test_reading_a_real_event_keeps_every_field_the_engine_wrote(traces) -> None:
    for events in traces:
        for data in events:
            event = read_event(data)
            assert event.extra == {}, f"{data['event']} fields no type declares: {event.extra}"
            for name, value in data.items():
                if name != "event":
                    assert _as_written(getattr(event, name)) == value, (data["event"], name)


def test_the_real_rounds_make_most_kinds_of_event(traces) -> None:
    """The rounds above are worth their time only if they make most kinds of event."""
    seen = {data["event"] for events in traces for data in events}
    # never made by these rounds: a failure, a coordinator at its limits, a tool's answer
    assert EVENTS - seen <= {
        "coordinator.error",
        "coordinator.skip",
        "tool.error",
        "warning",
        "terminal",
    }


def test_nested_parts_are_typed() -> None:
    activation = read_event(
        {
            "seq": 3,
            "ms": 1.5,
            "event": "activation",
            "task": "1",
            "mode": "selected",
            "candidates": ["a", "b"],
            "activated": [{"tool": "a", "reason": "rule"}],
        }
    )
    assert isinstance(activation, ActivationChoice)
    assert activation.activated == (ActivatedTool("a", "rule"),)
    assert activation.suitability is None and activation.ignored is None  # absent: None
    page = {"rank": 1, "document": "a.md", "page": 2, "heading": "H", "score": None}
    retrieval = Retrieval.listed({"tool": "rag", "corpus": "c", "query": "q", "pages": [page]})
    assert retrieval.pages == (RankedPage(1, "a.md", 2, "H", None),)
    assert retrieval.pages[0].to_dict() == page


def test_a_field_no_type_declares_is_kept_apart() -> None:
    event = read_event(
        {"seq": 1, "ms": 0.0, "event": "task.start", "task": "1", "prompt": "p", "depth": 0,
         "resumed": False, "added_by_a_tool": 7}
    )  # fmt: skip
    assert isinstance(event, TaskStart) and event.extra == {"added_by_a_tool": 7}


def test_an_event_lacking_a_required_field_is_unreadable_not_a_crash() -> None:
    event = read_event({"seq": 4, "ms": 2.0, "event": "task.end", "task": "1"})
    assert isinstance(event, Unreadable)
    assert (event.kind, event.seq, event.task) == ("task.end", 4, "1")
    assert "status" in event.problem


def test_an_event_of_an_unknown_kind_is_unreadable_with_its_fields() -> None:
    event = read_event({"seq": 9, "ms": 5.0, "event": "tool.dreamt", "task": None, "x": 1})
    assert isinstance(event, Unreadable) and event.values == {"x": 1}


def _as_written(value: Any) -> Any:
    """A typed value as the trace writes it."""
    if isinstance(value, RankedPage):
        return value.to_dict()
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    if isinstance(value, tuple):
        return [_as_written(item) for item in value]
    return value
