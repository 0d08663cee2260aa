"""What every room of a round shares: where its results, events, questions and LLM calls go.

A round writes to the session state and the round's trace; a subtask of a parallel group that
runs ahead of its earlier siblings writes to its `Branch` instead (a context variable set in the
subtask's own asyncio task), and the group is resolved in list order (subtasks.py). The rooms of
a round (round.py, coordinators.py, subtasks.py, activation.py, execution.py, answer.py) are
parts of one `Round` object and reach each other's steps through `self`; `Channels` is their
common base and declares what they share.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from runner.engine.env import RuntimeEnv
from runner.engine.failure import StepFailed
from runner.engine.results import (
    Clarification,
    PromptAndContext,
)
from runner.engine.task import (
    BufferView,
    Entry,
    Task,
    TaskStatus,
    ToolStatus,
    key_task_no,
)
from runner.sources import Source
from runner.trace import Trace

if TYPE_CHECKING:
    from runner.config.model import Limits, Pipeline
    from runner.engine.protocols import Tool
    from runner.engine.setup import RoundSetup
    from runner.engine.state import SessionState
    from runner.llm.prompts import Prompts


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


@dataclass
class Branch:
    """A subtask of a parallel group, running ahead of its earlier siblings: where its subtree's
    buffer entries, trace events, warnings and clarifying question go until the group is
    resolved in list order. Set in the subtask's own asyncio task (a context variable), so
    nothing else sees it."""

    held: list[Entry]  # the subtask's `held` list: its subtree's entries, in the order made
    base: BufferView  # the buffer as the group found it: what the subtree sees besides its own
    trace: Trace  # its events, added to the round's trace when the group is resolved
    pending: Clarification | None = None  # the question it asked, if it asked one
    result: Stop | BaseException | None = field(default=None, repr=False)
    warnings: list[str] = field(default_factory=list)  # added to the round's in list order

    def view(self) -> BufferView:
        return self.base.extended(self.held)


BRANCH: ContextVar[Branch | None] = ContextVar("runner_parallel_branch", default=None)


async def resolve(value: T | Awaitable[T]) -> T:
    """Tool methods may be plain or async (protocols.py): await what is awaitable."""
    if inspect.isawaitable(value):
        return await value
    return value  # type: ignore[return-value]


class Channels:
    """The state of one round and its channels; the base of every room of `Round`."""

    o: RoundSetup
    pipeline: Pipeline
    limits: Limits
    tools: Mapping[str, Tool]
    prompts: Prompts
    state: SessionState
    trace: Trace
    warnings: list[str]
    failed: dict[str, int]  # what failed in the round: tools, coordinators, tasks (`fail`)
    _checkpoint: Callable[[SessionState], None] | None
    _calls_seen: int  # the LLM client's call records already in the trace
    _last_task: str | None  # the task of the last event: where a call with no task goes

    def _env(self, task: Task, text: str) -> RuntimeEnv:
        return RuntimeEnv(
            pipeline=self.pipeline,
            llm=self.o.llm,  # type: ignore[arg-type]
            prompts=self.prompts,
            task=task,
            buffer=self._view(),
            text=text,
            tools=self.tools,
            emit=self.tool_event,
        )

    # --- where results, events and questions go (the round, or a parallel branch) -------

    def _view(self) -> BufferView:
        """What a tool may see of the buffer now: a snapshot (C20c)."""
        branch = BRANCH.get()
        return branch.view() if branch is not None else self.state.buffer.snapshot()

    def _completed(self, task_nos: set[str]) -> dict[str, tuple[PromptAndContext, ...]]:
        """C17: the entries the given tasks produced, as far as this branch can see."""
        view = self._view()
        return {key: results for key, results in view.items() if key_task_no(key) in task_nos}

    def _write(self, key: str, entry: PromptAndContext) -> None:
        branch = BRANCH.get()
        if branch is not None:
            branch.held.append((key, entry))
        else:
            self.state.buffer.add_entry(key, entry)

    def _set_pending(self, clarification: Clarification | None) -> None:
        branch = BRANCH.get()
        if branch is not None:
            branch.pending = clarification
        else:
            self.state.pending = clarification

    def trace_now(self) -> Trace:
        branch = BRANCH.get()
        return branch.trace if branch is not None else self.trace

    def save(self) -> None:
        if self._checkpoint is not None:
            self._checkpoint(self.state)

    def fail(self, kind: str, task: str, message: str) -> None:
        """A tool, coordinator or task that failed is never silent: it is a warning of the
        round, on the task it failed on, and counts in the stats (`stats.failed`), so the round
        is degraded (`RoundResult.degraded`). `kind`: tools | coordinators | tasks."""
        self.failed[kind] += 1
        self.warn(f"task {task}: {message}", task)

    def warn(self, message: str, task: str | None = None) -> None:
        self.warnings_now().append(message)
        self.emit("warning", task, message=message)

    def warnings_now(self) -> list[str]:
        branch = BRANCH.get()
        return branch.warnings if branch is not None else self.warnings

    def emit(self, event: str, task: str | None = None, **fields: Any) -> None:
        """An event of the orchestrator's own. Its fields are JSON values already (no sets,
        enums or objects) made for the event, so the trace takes them as they are: every task
        node makes several events."""
        branch = BRANCH.get()
        if branch is not None:
            branch.trace.record_json(event, task, fields)
        else:  # `_trace_for`, inlined: this runs five times per task node
            if len(getattr(self.o.llm, "calls", ())) != self._calls_seen:
                self._flush_llm_calls()
            if task is not None:
                self._last_task = task
            self.trace.record_json(event, task, fields)

    def tool_event(self, event: str, task: str | None = None, **fields: Any) -> None:
        """An event a tool adds (`env.trace`): its fields are made JSON."""
        self._trace_for(task).record(event, task, fields)

    def _trace_for(self, task: str | None) -> Trace:
        """Where the next event goes: the round's trace, after the LLM calls made since the
        last event; or, in a parallel branch, the branch's trace (its calls wait for the
        group)."""
        branch = BRANCH.get()
        if branch is not None:
            return branch.trace
        if len(getattr(self.o.llm, "calls", ())) != self._calls_seen:
            self._flush_llm_calls()
        if task is not None:
            self._last_task = task
        return self.trace

    def _flush_llm_calls(self) -> None:
        calls = self._llm_calls()
        for record in calls[self._calls_seen :]:
            fields = record.to_json() if hasattr(record, "to_json") else dict(record)
            # the task the call was made for (CallRecord.task); a client that does not say
            # gets the task of the event before it
            task = fields.pop("task", None) or self._last_task
            self.trace.emit("llm.call", task, **fields)
        self._calls_seen = len(calls)

    def _llm_calls(self) -> Sequence[Any]:
        """The client's call records (runner.llm.accounting.CallRecord), oldest first."""
        calls = getattr(self.o.llm, "calls", None)
        return calls if calls is not None else ()
