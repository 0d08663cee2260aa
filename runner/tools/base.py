"""What every built-in tool kind shares: its identity, its output (C23, C25), the context
consumer contract (C20c, C20d), clarification plumbing (C24) and clear errors.

A kind implements one coroutine, `run(call)`, and never cares how the orchestrator called it:
`Call` says whether the buffer came with the call and whether a clarification is being continued.
Whether the tool is a context consumer is decided by its configuration, so `instantiate` picks
the consumer variant of a kind's class when the tool consumes context (or builds its own answer
after its subtasks, C20e): only that variant has `execute_with_prior_context`, and calling its
plain `execute` raises (C20c).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, TypeVar

import jinja2

from runner.config.model import Output, TemplateRef, ToolConfig
from runner.engine.marker import extract_coordinator_original, extract_coordinator_task
from runner.engine.protocols import (
    ContextConsumerBase,
    ContextRequiredError,
    PriorContext,
    ToolEnv,
)
from runner.engine.results import Clarification, ToolResult
from runner.sources import Source, unique_sources
from runner.templating import environment as templates

if TYPE_CHECKING:
    from runner.tools.services import ToolServices


class ToolBuildError(Exception):
    """A tool cannot be built from its configuration; the message names the place and the fix."""


class ToolRunError(RuntimeError):
    """A tool failed while running, for a reason its author can fix (e.g. a template error)."""


def place(config: ToolConfig) -> str:
    """`file:line:col: tool 'name'` for messages, or just the tool when its place is unknown."""
    prefix = f"{config.where}: " if config.where is not None else ""
    return f"{prefix}tool {config.name!r}"


def consumes_context(config: ToolConfig) -> bool:
    """C20c/C20e: a tool gets the buffer when it says so, or when it is a coordinator that is
    activated on its own task after the subtasks it made (it builds its result from theirs)."""
    after_subtasks = config.decompose is not None and config.decompose.activate_after_subtasks
    return config.consumes_context or after_subtasks


def output_for(config: ToolConfig, env: ToolEnv) -> Output:
    """C23: `coordinator_output` applies when a coordinator asked for this run."""
    if config.coordinator_output is not None and env.coordinator_requested:
        return config.coordinator_output
    return config.output


def finish(
    config: ToolConfig, env: ToolEnv, text: str, sources: Sequence[Source] = ()
) -> ToolResult:
    """The tool's result as its configured output: context, guaranteed context (C23) or a
    terminal answer (C25)."""
    output = output_for(config, env)
    unique = unique_sources(sources)
    if output is Output.ANSWER:
        return ToolResult.terminal(text, unique)
    if output is Output.GUARANTEED:
        return ToolResult.guaranteed_context(text, unique)
    return ToolResult.context(text, unique)


def template_source(config: ToolConfig, ref: TemplateRef, label: str) -> str:
    """A template's text, read once when the tool is built; a missing file fails the build."""
    try:
        return ref.source()
    except OSError as exc:
        raise ToolBuildError(
            f"{place(config)}: cannot read its {label} template {ref.name}: {exc.strerror}; "
            "template paths are relative to the pipeline file"
        ) from None


def render(config: ToolConfig, label: str, source: str, variables: Mapping[str, Any]) -> str:
    """Render a tool's template in the sandbox; a template error names the tool and the template."""
    try:
        return templates.render(source, variables)
    except Exception as exc:  # a runtime error too (`1 // 0`, a filter on the wrong type)
        raise ToolRunError(f"{place(config)}: its {label} template failed: {_cause(exc)}") from exc


def evaluate(config: ToolConfig, label: str, expression: str, variables: Mapping[str, Any]) -> Any:
    """Evaluate a tool's Jinja expression in the sandbox, with the same error wording."""
    try:
        return templates.evaluate(expression, variables)
    except Exception as exc:
        raise ToolRunError(
            f"{place(config)}: its {label} expression {expression!r} failed: {_cause(exc)}"
        ) from exc


def _cause(error: Exception) -> str:
    """A template's own error as it says itself; any other with its type (`TypeError: …`)."""
    return (
        str(error)
        if isinstance(error, jinja2.TemplateError)
        else f"{type(error).__name__}: {error}"
    )


def trace_warning(env: ToolEnv) -> Callable[[str], None]:
    """Something a tool dropped or ignored, said in the round's trace (a `warning` event on
    its task) and nowhere else: not a failure of the round."""
    return lambda message: env.trace("warning", message=message)


def is_missing(value: Any) -> bool:
    """An extracted parameter counts as missing when absent, null, blank or an empty collection."""
    if value is None:
        return True
    if isinstance(value, str):
        return not value.strip()
    if isinstance(value, (list, tuple, dict, set)):
        return not value
    return False


def plain(value: Any) -> Any:
    """A read-only configuration value (mappings, tuples) as plain JSON-like dicts and lists."""
    if isinstance(value, Mapping):
        return {str(key): plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    return value


def may_ask(call: Call, services: ToolServices) -> bool:
    """C24: a tool asks again only while the task has clarification rounds left; past the limit
    it runs with what it has."""
    if call.clarification is None:
        return True
    return call.clarification.rounds < services.pipeline.limits.max_clarification_rounds


def with_answer(text: str, clarification: Clarification | None) -> str:
    """C24: continuing a clarification works on the original text plus the user's answer."""
    if clarification is None or not clarification.answer:
        return text
    return f"{text}\n{clarification.answer}"


@dataclass(frozen=True)
class Call:
    """One execution of a tool, however the orchestrator called it."""

    text: str  # the execution text (C21)
    env: ToolEnv
    prior: PriorContext | None = None  # the buffer snapshot; consumers only (C20c)
    clarification: Clarification | None = None  # set when continuing one (C24)

    @property
    def directive(self) -> str:
        """The coordinator's directive, or the whole text when no coordinator asked (C22)."""
        return extract_coordinator_task(self.text)

    @property
    def original(self) -> str:
        """The parent's text: ultimately the user's message (C22)."""
        return extract_coordinator_original(self.text)


def clarifying_question(
    config: ToolConfig, source: str, call: Call, params: Mapping[str, Any], missing: Sequence[str]
) -> ToolResult:
    """C24: the tool's `clarify.question`, rendered with CLARIFY_VARIABLES."""
    variables = {
        "params": dict(params),
        "missing": list(missing),
        "task": call.env.task.task_prompt,
        "tool": config.name,
    }
    question = render(config, "clarify question", source, variables).strip()
    return ToolResult.clarification(question, missing=list(missing))


class BuiltinTool(ABC):
    """The base of the built-in kinds. Subclasses implement `run`; a tool is a shared singleton
    and keeps nothing of a call in its own state (C20c)."""

    def __init__(self, config: ToolConfig, services: ToolServices) -> None:
        self.name = config.name
        self.config = config
        self.priority = config.priority
        self.services = services

    @abstractmethod
    async def run(self, call: Call) -> ToolResult:
        """The kind's work, however the orchestrator called the tool."""

    async def execute(self, text: str, env: ToolEnv) -> ToolResult:
        return await self.run(Call(text, env))

    async def execute_with_clarification(
        self, text: str, clarification: Clarification, env: ToolEnv
    ) -> ToolResult:
        return await self.run(Call(text, env, clarification=clarification))

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


class ConsumingTool(ContextConsumerBase):
    """The consumer variant's entry points (C20c, C20d): the buffer always comes with the call,
    and the entry points without it raise."""

    name: str
    run: Any  # the kind's `run(call)`, which follows this class in the method order

    async def execute_with_prior_context(
        self, text: str, prior_context: PriorContext, env: ToolEnv
    ) -> ToolResult:
        return await self.run(Call(text, env, prior=prior_context))

    async def execute_with_clarification_and_prior_context(
        self,
        text: str,
        clarification: Clarification,
        prior_context: PriorContext,
        env: ToolEnv,
    ) -> ToolResult:
        return await self.run(Call(text, env, prior_context, clarification))

    def execute_with_clarification(
        self, text: str, clarification: Clarification, env: ToolEnv
    ) -> ToolResult:
        raise ContextRequiredError(
            f"tool {self.name!r} is a context consumer: the orchestrator must continue its "
            "clarification with execute_with_clarification_and_prior_context(...)"
        )


ToolClass = TypeVar("ToolClass", bound=BuiltinTool)


@cache
def consumer_variant(cls: type[ToolClass]) -> type[ToolClass]:
    """The same kind with the consumer entry points in front (one class per kind, made once)."""
    return type(
        cls.__name__, (ConsumingTool, cls), {"__module__": cls.__module__, "__doc__": cls.__doc__}
    )


def instantiate(cls: type[ToolClass], config: ToolConfig, services: ToolServices) -> ToolClass:
    """A kind's tool, as a context consumer when its configuration makes it one."""
    chosen = consumer_variant(cls) if consumes_context(config) else cls
    return chosen(config, services)
