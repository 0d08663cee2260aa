"""Where a round's results, events, questions and warnings go: the round's own channel, or a
parallel branch's.

A round writes to the session state and the round's trace (`RoundChannel`); a subtask of a
parallel group that runs ahead of its earlier siblings writes to its `Branch` instead, and the
group is resolved in list order (subtasks.py). Both have the same methods, so a step of the round
writes to `ctx.out` and never asks which one it has: the `RoundContext` of a branch's subtree
carries the branch (context.py).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from runner.engine.failure import StepFailed
from runner.engine.results import Clarification, PromptAndContext
from runner.engine.task import BufferView, Entry, TaskStatus, ToolStatus
from runner.sources import Source
from runner.trace import Trace

if TYPE_CHECKING:
    from runner.engine.state import SessionState


T = TypeVar("T")

CLOSED = frozenset({TaskStatus.DONE, TaskStatus.SKIPPED, TaskStatus.FAILED})
FINISHED_TOOL = frozenset({ToolStatus.DONE, ToolStatus.FAILED})


class RoundError(Exception):
    """Ends the round with an error the user can read (e.g. too many clarification rounds)."""


@contextmanager
def during(step: str) -> Iterator[None]:
    """An exception raised in the block ends the round naming `step` ("answer (LLM purpose)"):
    the block is a step of the round that is no tool's. An error the user can read already
    (RoundError), or one a step inside it named, passes as it is."""
    try:
        yield
    except (RoundError, StepFailed):
        raise
    except Exception as exc:
        raise StepFailed(step, exc) from exc


@dataclass(frozen=True)
class Stop:
    """Why processing stopped before the final answer: a question or a terminal answer."""

    outcome: str  # CLARIFICATION | ANSWER | ERROR
    text: str
    sources: tuple[Source, ...] = ()
    key: str = ""  # a terminal answer: the completion key of the tool that gave it
    # an error an unexpected exception made: that exception (its traceback goes to the trace)
    exception: Exception | None = field(default=None, compare=False)


async def resolve(value: T | Awaitable[T]) -> T:
    """Tool methods may be plain or async (protocols.py): await what is awaitable."""
    if inspect.isawaitable(value):
        return await value
    return value


class Channel(Protocol):
    """Where the steps of a round (or of a branch's subtree) put what they make."""

    trace: Trace
    warnings: list[str]

    def view(self) -> BufferView:
        """What a tool may see of the buffer now: a snapshot (C20c)."""
        ...

    def write(self, key: str, entry: PromptAndContext) -> None:
        """A tool's result, under its completion key (C7, C20)."""
        ...

    def set_pending(self, clarification: Clarification | None) -> None:
        """The clarifying question the round ends with (C24)."""
        ...

    def event(self, event: str, task: str | None, fields: dict[str, Any]) -> None:
        """An event of the orchestrator's own, its fields JSON values already."""
        ...

    def tool_event(self, event: str, task: str | None, fields: dict[str, Any]) -> None:
        """An event a tool adds (`env.trace`): its fields are made JSON."""
        ...


class RoundChannel:
    """The round's own channel: the session state's buffer and pending question, and the
    round's trace, where the LLM calls made since the last event are listed before it."""

    def __init__(self, state: SessionState, trace: Trace, llm: object) -> None:
        self.state = state
        self.trace = trace
        self.warnings: list[str] = []
        self._llm = llm
        # the client's call records (a TaskClient's list, the same object all round), and how
        # many of them are traced already: read once, not on each of a task node's five events
        self._calls = self.llm_calls()
        self._calls_seen = len(self._calls)
        self.last_task: str | None = None  # the task of the last event: a call with no task

    def view(self) -> BufferView:
        return self.state.buffer.snapshot()

    def write(self, key: str, entry: PromptAndContext) -> None:
        self.state.buffer.add_entry(key, entry)

    def set_pending(self, clarification: Clarification | None) -> None:
        self.state.pending = clarification

    def event(self, event: str, task: str | None, fields: dict[str, Any]) -> None:
        if len(self._calls) != self._calls_seen:  # (this runs five times per task node)
            self._flush_llm_calls()
        if task is not None:
            self.last_task = task
        self.trace.record_json(event, task, fields)

    def tool_event(self, event: str, task: str | None, fields: dict[str, Any]) -> None:
        if len(self._calls) != self._calls_seen:
            self._flush_llm_calls()
        if task is not None:
            self.last_task = task
        self.trace.record(event, task, fields)

    def _flush_llm_calls(self) -> None:
        calls = self._calls
        for record in calls[self._calls_seen :]:
            fields = record.to_json() if hasattr(record, "to_json") else dict(record)
            # the task the call was made for (CallRecord.task); a client that does not say
            # gets the task of the event before it
            task = fields.pop("task", None) or self.last_task
            self.trace.emit("llm.call", task, **fields)
        self._calls_seen = len(calls)

    def llm_calls(self) -> Sequence[Any]:
        """The client's call records (runner.llm.accounting.CallRecord), oldest first."""
        calls = getattr(self._llm, "calls", None)
        return calls if calls is not None else ()


@dataclass
class Branch:
    """A subtask of a parallel group, running ahead of its earlier siblings: where its subtree's
    buffer entries, trace events, warnings and clarifying question go until the group is
    resolved in list order. Only the subtree's `RoundContext` carries it, so nothing else
    sees it; its LLM calls are listed after the group's events."""

    held: list[Entry]  # the subtask's `held` list: its subtree's entries, in the order made
    base: BufferView  # the buffer as the group found it: what the subtree sees besides its own
    trace: Trace  # its events, added to the round's trace when the group is resolved
    pending: Clarification | None = None  # the question it asked, if it asked one
    result: Stop | BaseException | None = field(default=None, repr=False)
    warnings: list[str] = field(default_factory=list)  # added to the round's in list order

    def view(self) -> BufferView:
        return self.base.extended(self.held)

    def write(self, key: str, entry: PromptAndContext) -> None:
        self.held.append((key, entry))

    def set_pending(self, clarification: Clarification | None) -> None:
        self.pending = clarification

    def event(self, event: str, task: str | None, fields: dict[str, Any]) -> None:
        self.trace.record_json(event, task, fields)

    def tool_event(self, event: str, task: str | None, fields: dict[str, Any]) -> None:
        self.trace.record(event, task, fields)
