"""The trace of a round: one event per step, each saying what happened and why.

A room near the bottom of the layers: the engine and the tools write a trace, the application
layer and every face read it. Here is how one is written (`Trace`); `runner.trace.events` types
its events, one dataclass each, and `runner.trace.why` says them in words, once for every face.

An event is `{seq, ms, event, task, ...fields}`: `seq` counts from 1, `ms` is the time since the
trace began, `event` is one of `EVENTS` (docs/orchestration.md lists them) and `task` the task
number the event is about (null for round-level events). `schemas/trace.schema.json` describes
every event's fields (a test holds the types of `runner.trace.events` to it).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Mapping
from enum import Enum
from functools import cache
from pathlib import Path
from typing import Any

from runner.trace.events import EVENT_TYPES

# every event a trace may hold: those runner.trace.events declares a type for
EVENTS: frozenset[str] = frozenset(EVENT_TYPES)

_RESERVED = frozenset({"seq", "ms", "event", "task"})


class TraceError(ValueError):
    """An event that the trace format does not know, or a field that would overwrite its head."""


class Trace:
    """Collects the events of one round (or of several, when the caller reuses it)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._events: list[dict[str, Any]] = []
        # `record_json`'s events not made into dicts yet, oldest first, in four lists of the
        # same length (no container an event: the garbage collector has less to walk): the
        # clock reading, the event (None: an event `record` made, its fields the whole dict),
        # the task and the fields. `events` makes them, in order, when it is first read.
        self._ats: list[float] = []
        self._names: list[str | None] = []
        self._tasks: list[str | None] = []
        self._fields: list[Mapping[str, Any]] = []
        self._clock = clock
        self._start = clock()
        # told every event as it is recorded (a face showing a round's progress live); None
        # costs one test per event
        self.listener: Callable[[str, str | None, Mapping[str, Any]], None] | None = None

    @property
    def events(self) -> list[dict[str, Any]]:
        """Every event of the trace, in order, each a dict `{seq, ms, event, task, ...fields}`."""
        if self._names:
            self._materialise()
        return self._events

    @events.setter
    def events(self, events: list[dict[str, Any]]) -> None:
        self._ats, self._names, self._tasks, self._fields = [], [], [], []
        self._events = events

    def _materialise(self) -> None:
        """Make the recorded events' dicts, numbered on from the events made before them."""
        events, start = self._events, self._start
        pending = zip(self._ats, self._names, self._tasks, self._fields, strict=True)
        self._ats, self._names, self._tasks, self._fields = [], [], [], []
        for at, event, task, values in pending:
            if event is None:  # an event `record` made (and numbered) already
                events.append(values)  # type: ignore[arg-type]  # a recorded event, already whole
                continue
            record = {
                "seq": len(events) + 1,
                # whole microseconds, as milliseconds with three decimals
                "ms": int((at - start) * 1_000_000) / 1000,
                "event": event,
                "task": task,
                **values,
            }
            for name, value in values.items():
                if type(value) is tuple:  # a tuple of JSON values is a list, as in `record`
                    # (of copies of the objects in it: the tuple is shared, its events are not)
                    record[name] = [dict(v) if type(v) is dict else v for v in value]
            events.append(record)

    def emit(self, event: str, task: str | None = None, **fields: Any) -> dict[str, Any]:
        return self.record(event, task, fields)

    def record(self, event: str, task: str | None, fields: Mapping[str, Any]) -> dict[str, Any]:
        """`emit` with the fields as one mapping (the orchestrator's hot path: every task node
        makes several events)."""
        if event not in EVENTS:
            raise TraceError(
                f"unknown trace event {event!r}; use one of: {', '.join(sorted(EVENTS))}"
            )
        record = {
            # the events made and those waiting to be made come before it
            "seq": len(self._events) + len(self._names) + 1,
            # whole microseconds, as milliseconds with three decimals (cheaper than round())
            "ms": int((self._clock() - self._start) * 1_000_000) / 1000,
            "event": event,
            "task": task,
            **fields,
        }
        if len(record) != len(fields) + len(_RESERVED):  # a field took a head key's place
            clash = sorted(_RESERVED.intersection(fields))
            raise TraceError(f"trace event fields may not be named {clash}")
        if not _PLAIN.issuperset(map(type, fields.values())):
            for name, value in fields.items():
                if type(value) not in _PLAIN:
                    record[name] = _jsonable(value)
        if self.listener is not None:
            self.listener(event, task, record)
        if self._names:  # made already, it waits behind the events recorded before it
            self._ats.append(0.0)
            self._names.append(None)
            self._tasks.append(task)
            self._fields.append(record)
        else:
            self._events.append(record)
        return record

    def record_json(self, event: str, task: str | None, fields: Mapping[str, Any]) -> None:
        """`record` for a producer that hands over JSON values only (str, numbers, booleans,
        None, and lists and dicts of them), made for this event and held by no one else: they
        are kept as they are, unchecked; a field may also be a tuple of such values, shared by
        the events of many tasks (the producer never changes it), which becomes a list, each
        dict in it a copy. The orchestrator's own events come this way, several per task node,
        so the event's dict is made only when `events` is read: here the event is a clock
        reading and the fields it was handed."""
        if event not in EVENTS:
            raise TraceError(f"unknown trace event {event!r}")
        if self.listener is not None:
            self.listener(event, task, fields)
        self._ats.append(self._clock())
        self._names.append(event)
        self._tasks.append(task)
        self._fields.append(fields)

    def child(self) -> Trace:
        """A trace on the same clock, whose events `adopt` adds to this one later (the events
        of a subtask running concurrently with its siblings)."""
        child = Trace(self._clock)
        child._start = self._start
        child.listener = self.listener
        return child

    def adopt(self, child: Trace) -> None:
        """Add a child's events after this trace's own, numbered on from them (their `ms` stay
        when they happened)."""
        events = self.events
        for record in child.events:
            record["seq"] = len(events) + 1
            events.append(record)
        child.events = []

    def of(self, event: str) -> list[dict[str, Any]]:
        """The events of one name, in order."""
        return [e for e in self.events if e["event"] == event]

    def to_jsonl(self) -> str:
        return "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in self.events)

    def write_jsonl(self, path: Path | str) -> None:
        """The trace file (`runner run --trace`): credentials in it redacted, as everywhere a
        trace leaves runner (runner.text.redact)."""
        from runner.text.credentials import hide_in_json

        shown = (hide_in_json(event) for event in self.events)
        text = "".join(json.dumps(event, ensure_ascii=False) + "\n" for event in shown)
        Path(path).write_text(text, encoding="utf-8")

    def validate(self) -> list[str]:
        """Every event checked against schemas/trace.schema.json; an empty list when all pass."""
        return validate_events(self.events)


def validate_events(events: Iterable[Mapping[str, Any]]) -> list[str]:
    problems: list[str] = []
    for event in events:
        label = f"event {event.get('seq')} ({event.get('event')})"
        problems.extend(schema_problems("trace", event, label))
    return problems


def schema_problems(schema: str, instance: Mapping[str, Any], label: str) -> list[str]:
    """`instance` checked against `schemas/<schema>.schema.json`: one readable line a problem."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(_schema(schema))
    return [
        f"{label}: {'/'.join(str(p) for p in error.absolute_path) or '(top)'}: {error.message}"
        for error in validator.iter_errors(dict(instance))
    ]


@cache
def _schema(name: str) -> dict[str, Any]:
    from runner.resources import schema_path

    return json.loads(schema_path(name).read_text(encoding="utf-8"))


# Exact types that are JSON already (an Enum subclassing str is not one of them).
_PLAIN = frozenset({str, int, float, bool, type(None)})


def _jsonable(value: Any) -> Any:
    """Fields as plain JSON: enums by value, tuples and sets as lists, objects by `to_json`."""
    kind = type(value)
    if kind in _PLAIN:  # the common case first: every event pays for this
        return value
    if kind is dict:
        return {str(k): v if type(v) in _PLAIN else _jsonable(v) for k, v in value.items()}
    if kind is list or kind is tuple:
        return [v if type(v) in _PLAIN else _jsonable(v) for v in value]
    if isinstance(value, Enum):
        return value._value_  # the plain attribute: `.value` is a slower descriptor
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted(_jsonable(v) for v in value)
    if hasattr(value, "to_json"):
        return _jsonable(value.to_json())
    if value is None or isinstance(value, (int, float, str, bool)):
        return value
    return str(value)
