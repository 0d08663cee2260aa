"""The small protocols through which the engine knows tools (and a `python` tool implements).

They mirror the original interfaces: IChatbotTool / IOrchestratorActivatedTool (`Tool`),
IAgentCoordinator (`Coordinator`), IContextConsumerTool (`ContextConsumer`) and
IClarifiableContextConsumerTool (`ClarifiableContextConsumer`). Methods may be plain or `async`;
the engine awaits whatever is awaitable.
"""

from __future__ import annotations

from collections.abc import Awaitable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from runner.engine.results import (
    Clarification,
    PromptAndContext,
    ReasonedDecision,
    SubtaskDecision,
    ToolResult,
)

if TYPE_CHECKING:
    from runner.config.model import Pipeline, ToolConfig
    from runner.engine.task import Task
    from runner.llm.prompts import Prompts
    from runner.llm.types import LLMClient

PriorContext = Mapping[str, tuple[PromptAndContext, ...]]


class ContextRequiredError(RuntimeError):
    """C20c: a context consumer was called without the context buffer."""


class ToolEnv(Protocol):
    """What the runtime gives a tool for one execution. Never kept by the tool."""

    pipeline: Pipeline
    llm: LLMClient
    prompts: Prompts  # one method per LLM purpose (extraction, a prompt tool's call, ...)
    task: Task  # the task being executed (read it; only coordinators change tasks)
    buffer: PriorContext  # a snapshot of the context buffer when the call started

    @property
    def coordinator_requested(self) -> bool:
        """C22: the execution text carries the marker (a coordinator asked for this run)."""
        ...

    def tool(self, name: str) -> Tool:
        """C26: another tool of the domain, for a direct call of one of its functions."""
        ...

    def render(self, template: Any, variables: Mapping[str, Any]) -> str:
        """Render a TemplateRef (or template text) in the sandboxed Jinja environment."""
        ...

    def trace(self, event: str, **fields: Any) -> None:
        """Add an event to the round's trace."""
        ...

    def leave_out_subtasks(self, count: int) -> None:
        """C4: a coordinator that stops making subtasks once the task has
        `limits.max_subtasks` says how many more it would have made, so that the round's
        warning about the subtasks dropped counts them too (and nothing is built to be
        dropped)."""
        ...


@runtime_checkable
class Tool(Protocol):
    name: str
    config: ToolConfig

    def execute(self, text: str, env: ToolEnv) -> ToolResult | Awaitable[ToolResult]:
        """Run on the execution text (C21): prompt_context, marker, task_prompt."""
        ...


@runtime_checkable
class ClarifiableTool(Tool, Protocol):
    def execute_with_clarification(
        self, text: str, clarification: Clarification, env: ToolEnv
    ) -> ToolResult | Awaitable[ToolResult]:
        """C24: run again with the question this tool asked and the user's answer."""
        ...


@runtime_checkable
class ContextConsumer(Tool, Protocol):
    def execute_with_prior_context(
        self, text: str, prior_context: PriorContext, env: ToolEnv
    ) -> ToolResult | Awaitable[ToolResult]:
        """C20c: run with a snapshot of the context buffer."""
        ...


@runtime_checkable
class ClarifiableContextConsumer(ContextConsumer, Protocol):
    def execute_with_clarification_and_prior_context(
        self,
        text: str,
        clarification: Clarification,
        prior_context: PriorContext,
        env: ToolEnv,
    ) -> ToolResult | Awaitable[ToolResult]:
        """C20d: continue a clarification with the buffer too."""
        ...


@runtime_checkable
class Coordinator(Tool, Protocol):
    """A coordinator may set `activate_after_subtasks = True` (C20e): once the subtasks it made
    on a task are closed, it is activated on that task as a context consumer."""

    def decompose(self, task: Task, env: ToolEnv) -> Task | Awaitable[Task]:
        """C1–C2: return the task unchanged, or change it in place and return it."""
        ...


@runtime_checkable
class ConditionalDecider(Protocol):
    def decide_conditional(
        self, parent: Task, next_subtask: Task, completed_so_far: PriorContext, env: ToolEnv
    ) -> SubtaskDecision | ReasonedDecision | Awaitable[SubtaskDecision | ReasonedDecision]:
        """C16: RUN or SKIP a conditional subtask this coordinator made. Default: RUN (C3).
        A ReasonedDecision also says why, in the coordinator's terms (shown by the Why page)."""
        ...


def is_context_consumer(tool: object) -> bool:
    return callable(getattr(tool, "execute_with_prior_context", None))


def is_coordinator(tool: object) -> bool:
    return callable(getattr(tool, "decompose", None))


class ContextConsumerBase:
    """Base for consumers: calling one without the buffer is an error (C20c)."""

    name: str

    def execute(self, text: str, env: ToolEnv) -> ToolResult:
        raise ContextRequiredError(
            f"tool {self.name!r} is a context consumer: the orchestrator must run it with "
            "execute_with_prior_context(...) and a snapshot of the context buffer"
        )
