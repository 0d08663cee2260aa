"""The `ToolEnv` the orchestrator hands a tool for one execution (protocols.ToolEnv)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from runner.config.model import TemplateRef
from runner.engine.marker import is_coordinator_requested
from runner.engine.protocols import PriorContext, Tool
from runner.engine.task import Task
from runner.templating import environment as templates

if TYPE_CHECKING:
    from runner.config.model import Pipeline
    from runner.llm.prompts import Prompts
    from runner.llm.types import LLMClient


class UnknownToolError(LookupError):
    """A direct call (C26) named a tool the domain does not have."""


@dataclass
class RuntimeEnv:
    """What a tool is handed when it runs: the pipeline, the LLM, its task and context."""

    pipeline: Pipeline
    llm: LLMClient
    prompts: Prompts
    task: Task
    buffer: PriorContext  # a snapshot taken when the call started (C20c)
    text: str  # what the tool was handed: the execution text, or task_prompt for a coordinator
    tools: Mapping[str, Tool]
    emit: Callable[..., Any]  # the round's trace emitter: emit(event, task, **fields)
    left_out_subtasks: int = field(default=0)  # C4: what a coordinator did not make (see below)

    @property
    def coordinator_requested(self) -> bool:
        """C22: the text this call got carries the coordinator marker."""
        return is_coordinator_requested(self.text)

    def tool(self, name: str) -> Tool:
        """C26: another tool of the domain, by simple or prefixed name, for a direct call.

        Nothing of the orchestrator is involved: no suitability, no buffer, no clarification."""
        config = self.pipeline.find_tool(name)
        if config is None or config.name not in self.tools:
            known = ", ".join(self.tools) or "none"
            raise UnknownToolError(
                f"task {self.task.task_no}: a direct call asked for tool {name!r}, which the "
                f"domain {self.pipeline.domain!r} does not have (its tools: {known})"
            )
        return self.tools[config.name]

    def render(self, template: TemplateRef | str, variables: Mapping[str, Any]) -> str:
        source = template.source() if isinstance(template, TemplateRef) else template
        return templates.render(source, variables)

    def trace(self, event: str, **fields: Any) -> None:
        self.emit(event, self.task.task_no, **fields)

    def leave_out_subtasks(self, count: int) -> None:
        self.left_out_subtasks += count
