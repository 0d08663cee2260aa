"""`RoundContext`: everything one round's steps share, in one typed object.

Every step of a round is a plain function that takes the context first (`coordinators.py`,
`subtasks.py`, `activation.py`, `execution.py`, `answer.py`, `round.py`). It holds what the
pipeline's rounds share (`setup`: the orchestrator, through the `RoundSetup` protocol), the
session state the round works on in place, where the round's results and events go (`out`: the
round's channel, or a parallel branch's, channels.py), the count of what failed, and the
checkpoint callback. A parallel branch's subtree gets a copy with its own `out` (`in_branch`);
nothing else about a context changes while the round runs, but for `rules_matched`, a memo the
classification fills so that the root's activation matches its rules without a hop of its own.

It also holds the round's LLM client (`llm`, a `runner.llm.bound.TaskClient`: the round's call
records and the face's answer stream). Every LLM call is made through a client bound to the task
it is made for: the client and prompts a tool is handed (`env`), and those a purpose of the
engine's own is asked through (`prompts_for`), so each call record names its task, also in the
subtasks of a parallel group running concurrently.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any

from runner.engine.env import RuntimeEnv
from runner.engine.task import Task

if TYPE_CHECKING:
    from runner.config.model import Limits, Pipeline
    from runner.engine.channels import Branch, Channel
    from runner.engine.setup import RoundSetup
    from runner.engine.state import SessionState
    from runner.llm.bound import TaskClient
    from runner.llm.prompts import Prompts
    from runner.llm.types import LLMClient


@dataclass(frozen=True, slots=True)
class RoundContext:
    """One round's state and channels, handed to every step of the round."""

    setup: RoundSetup  # what the pipeline's rounds share: tools, coordinators, forced plans
    state: SessionState  # worked on in place; the checkpoint stores it (C24)
    out: Channel  # where results, events, questions and warnings go: the round or a branch
    failed: dict[str, int]  # what failed in the round: tools, coordinators, tasks (`fail`)
    checkpoint: Callable[[SessionState], None] | None = None
    llm: TaskClient | None = None  # the round's client (None: a test's world may have none)
    # by text: the tools whose activation rule matches it, when the prompt type's hop off the
    # loop matched them on that text (activation.classify_off_loop); shared by every branch
    rules_matched: dict[str, set[str]] = field(default_factory=dict)

    @property
    def pipeline(self) -> Pipeline:
        return self.setup.pipeline

    @property
    def limits(self) -> Limits:
        return self.setup.pipeline.limits

    @property
    def root(self) -> Task:
        assert self.state.root is not None
        return self.state.root

    def in_branch(self, branch: Branch) -> RoundContext:
        """The context of a parallel subtask's subtree: the same round, writing to `branch`."""
        return replace(self, out=branch)

    def llm_for(self, task_no: str) -> TaskClient | None:
        """The round's client, its calls made for task `task_no`."""
        return None if self.llm is None else self.llm.for_task(task_no)

    def prompts_for(self, task: Task, client: TaskClient | None = None) -> Prompts:
        """The pipeline's prompts, asking the round's client for `task` (or `client`)."""
        client = client or self.llm_for(task.task_no)
        bound = getattr(self.setup.prompts, "bound_to", None)  # (a test's prompts may not)
        return self.setup.prompts if client is None or bound is None else bound(client)

    def env(self, task: Task, text: str, charged: str | None = None) -> RuntimeEnv:
        """The `ToolEnv` of one tool call on `task`, handed `text` (protocols.ToolEnv); its
        LLM calls are made for `task` (or for task `charged`)."""
        return TaskEnv(self, task, text, charged or task.task_no)

    def emit(self, event: str, task: str | None = None, **fields: Any) -> None:
        """An event of the orchestrator's own. Its fields are JSON values already (no sets,
        enums or objects) made for the event, so the trace takes them as they are: every task
        node makes several events."""
        self.out.event(event, task, fields)

    def tool_event(self, event: str, task: str | None = None, **fields: Any) -> None:
        """An event a tool adds (`env.trace`): its fields are made JSON."""
        self.out.tool_event(event, task, fields)

    def warn(self, message: str, task: str | None = None) -> None:
        self.out.warnings.append(message)
        self.emit("warning", task, message=message)

    def fail(self, kind: str, task: str, message: str) -> None:
        """A tool, coordinator or task that failed is never silent: it is a warning of the
        round, on the task it failed on, and counts in the stats (`stats.failed`), so the round
        is degraded (`RoundResult.degraded`). `kind`: tools | coordinators | tasks."""
        self.failed[kind] += 1
        self.warn(f"task {task}: {message}", task)

    def save(self) -> None:
        if self.checkpoint is not None:
            self.checkpoint(self.state)


class TaskEnv(RuntimeEnv):
    """The env of one call in a round (`RoundContext.env`): its `llm` and `prompts`, bound to
    the task the calls are charged to, are made when the tool first reads them. Most calls
    make no LLM call, and binding cost a client and a prompts view per call: about 1.4 µs of
    a task node's 30 (issue 33)."""

    def __init__(self, ctx: RoundContext, task: Task, text: str, charged: str) -> None:
        self.pipeline = ctx.setup.pipeline
        self.task = task
        self.buffer = ctx.out.view()  # taken now: the snapshot of when the call started (C20c)
        self.text = text
        self.tools = ctx.setup.tools
        self.emit = ctx.tool_event
        self.left_out_subtasks = 0
        self._ctx = ctx
        self._charged = charged

    @cached_property
    def _client(self) -> TaskClient | None:
        return self._ctx.llm_for(self._charged)

    @cached_property
    def llm(self) -> LLMClient:  # type: ignore[override]  # (set once, on first read)
        return self._client or self._ctx.setup.llm  # type: ignore[return-value]  # (a test's world may have none)

    @cached_property
    def prompts(self) -> Prompts:  # type: ignore[override]  # (set once, on first read)
        return self._ctx.prompts_for(self.task, self._client)
