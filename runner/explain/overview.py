"""A pipeline at a glance: its tools as table rows, each coordinator's plan, the deep fallback.

Labels say what the engine will really do with a tool, which is not always what its
`activation:` says: the retrieval tool runs beside the activated tools on every task that has
no required tools (C14, C27), and the deep fallback's coordinator runs only through the fallback
(C28, C30).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

from runner.config.model import (
    ActivationMode,
    ConditionKind,
    DeepSearchOptions,
    NeighborSearchOptions,
    Output,
    Pipeline,
    SearchOptions,
    SubtaskTemplate,
    ToolConfig,
    ToolKind,
)

# kinds whose tools always get the context buffer, whatever `consumes_context` says (C20c)
ALWAYS_CONSUMING = frozenset({ToolKind.DEEP_SEARCH, ToolKind.NEIGHBOR_SEARCH})
# kinds whose answer to a coordinator is guaranteed context unless `coordinator_output` says
# otherwise (C32; runner.tools.search.answering_config)
ANSWERING_KINDS = frozenset({ToolKind.SEARCH, ToolKind.NEIGHBOR_SEARCH})


@dataclass(frozen=True)
class ToolRow:
    name: str
    kind: str
    priority: int
    activation: str
    prompt_types: tuple[str, ...]  # empty: every type
    coordinator: str
    consumer: str
    output: str
    forced_by: tuple[str, ...]
    retrieval: bool  # the domain's retrieval tool (C27)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class SubtaskPlan:
    key: str  # the template's `name`, or `#<n>` (its place in the block)
    prompt: str
    id: str | None
    for_each: str | None
    loop_var: str
    required_tools: tuple[str, ...]
    condition: str | None  # how its conditional rule reads, None when it always runs

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class DeepSearchPlan:
    """A deep search coordinator's wiring (C29, C31)."""

    max_missing: int
    search_tool: str
    search: str  # how the search tool reads pages
    neighbor_tool: str | None
    neighbors: str | None  # which pages the neighbour tool reads

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class CoordinatorPlan:
    name: str
    kind: str
    priority: int
    prompt_types: tuple[str, ...]
    extracts: tuple[str, ...]  # the extraction schema's fields (purpose `decompose`)
    relevant_if: str | None
    append_prompt: bool
    subtasks: tuple[SubtaskPlan, ...]
    activate_after_subtasks: bool
    deep_search: DeepSearchPlan | None = None  # a `deep_search` kind's wiring
    unknown: bool = False  # a `python` tool: whether and how it decomposes is its class's

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class FallbackPlan:
    coordinator: str
    prompt_types: tuple[str, ...]  # the types that have the fallback
    without: tuple[str, ...]  # the types that have none (C28)
    gatekeeper: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


# --- the tools table -------------------------------------------------------------------------


def tool_rows(pipeline: Pipeline) -> list[ToolRow]:
    """One row a tool, by priority (ties in file order, as the engine orders them)."""
    forced = forced_by(pipeline)
    return [
        ToolRow(
            name=tool.name,
            kind=tool.kind.value,
            priority=tool.priority,
            activation=activation_label(pipeline, tool),
            prompt_types=tool.prompt_types,
            coordinator=coordinator_label(pipeline, tool),
            consumer=consumer_label(tool),
            output=output_label(tool),
            forced_by=tuple(forced.get(tool.name, ())),
            retrieval=tool.name == pipeline.retrieval_tool,
        )
        for tool in by_priority(pipeline, pipeline.tools)
    ]


def by_priority(pipeline: Pipeline, tools: Iterable[ToolConfig]) -> list[ToolConfig]:
    """Lower priority first; ties in file order (the orchestrator's order)."""
    order = {tool.name: index for index, tool in enumerate(pipeline.tools)}
    return sorted(tools, key=lambda tool: (tool.priority, order[tool.name]))


def is_fallback_coordinator(pipeline: Pipeline, tool: ToolConfig) -> bool:
    fallback = pipeline.deep_fallback
    if fallback is None:
        return False
    found = pipeline.find_tool(fallback.coordinator)
    return found is not None and found.name == tool.name


def activation_label(pipeline: Pipeline, tool: ToolConfig) -> str:
    if tool.name == pipeline.retrieval_tool:
        return "retrieval tool: on every task without required tools (C14, C27)"
    if is_fallback_coordinator(pipeline, tool):
        return "deep fallback only (C28)"
    activation = tool.activation
    if activation.mode is not ActivationMode.RULE:
        return activation.mode.value
    rules = []
    if activation.keywords:
        rules.append("keywords " + ", ".join(activation.keywords))
    if activation.pattern:
        rules.append(f"pattern {activation.pattern}")
    return "rule: " + "; ".join(rules)


def coordinator_label(pipeline: Pipeline, tool: ToolConfig) -> str:
    if tool.decompose is not None:
        count = len(tool.decompose.subtasks)
        label = f"yes: {count} subtask template{'s' if count != 1 else ''}"
        return label + (", then itself" if tool.decompose.activate_after_subtasks else "")
    if tool.kind is ToolKind.DEEP_SEARCH:
        return "deep search"
    if tool.kind is ToolKind.PYTHON:
        return "if the class has decompose()"
    return "-"


def consumer_label(tool: ToolConfig) -> str:
    from runner.tools.base import consumes_context

    if tool.kind is ToolKind.PYTHON and not tool.consumes_context:
        return "if the class is one"
    return "yes" if consumes_context(tool) or tool.kind in ALWAYS_CONSUMING else "-"


def output_label(tool: ToolConfig) -> str:
    """What the tool's result becomes (C23, C25), and what it becomes when a coordinator asks."""
    if tool.kind is ToolKind.DEEP_SEARCH:
        return Output.GUARANTEED.value
    label = tool.output.value
    asked = tool.coordinator_output
    if asked is None and tool.kind in ANSWERING_KINDS:
        asked = Output.GUARANTEED
    if asked is not None and asked is not tool.output:
        label += f" ({asked.value} when a coordinator asks)"
    return label


def forced_by(pipeline: Pipeline) -> dict[str, list[str]]:
    """Which coordinators force each tool (C13): subtask templates' `required_tools`, and a deep
    search coordinator's search and neighbour search tools (C29)."""
    forced: dict[str, list[str]] = {}

    def add(name: str, by: str) -> None:
        config = pipeline.find_tool(name)
        if config is not None and by not in forced.setdefault(config.name, []):
            forced[config.name].append(by)

    for tool in pipeline.tools:
        for template in tool.decompose.subtasks if tool.decompose else ():
            for name in template.required_tools:
                add(name, tool.name)
        if isinstance(tool.options, DeepSearchOptions):
            add(tool.options.search_tool, tool.name)
            if tool.options.neighbor_search_tool:
                add(tool.options.neighbor_search_tool, tool.name)
    return forced


# --- the coordinators ------------------------------------------------------------------------


def coordinator_plans(pipeline: Pipeline) -> list[CoordinatorPlan]:
    """Every tool that is (or may be) a coordinator, by priority."""
    return [
        coordinator_plan(pipeline, tool)
        for tool in by_priority(pipeline, pipeline.tools)
        if tool.is_coordinator or tool.kind is ToolKind.PYTHON
    ]


def coordinator_plan(pipeline: Pipeline, tool: ToolConfig) -> CoordinatorPlan:
    plan = tool.decompose
    extract = plan.extract if plan is not None else None
    return CoordinatorPlan(
        name=tool.name,
        kind=tool.kind.value,
        priority=tool.priority,
        prompt_types=tool.prompt_types,
        extracts=tuple(str(name) for name in extract.schema.get("properties", {}))
        if extract is not None
        else (),
        relevant_if=plan.relevant_if if plan is not None else None,
        append_prompt=plan is not None and plan.append_prompt is not None,
        subtasks=tuple(
            subtask_plan(template, number)
            for number, template in enumerate(plan.subtasks if plan else (), start=1)
        ),
        activate_after_subtasks=plan is not None and plan.activate_after_subtasks,
        deep_search=deep_search_plan(pipeline, tool),
        unknown=tool.kind is ToolKind.PYTHON and plan is None,
    )


def template_key(template: SubtaskTemplate, number: int) -> str:
    """How the declarative coordinator keys a template: its name, else `#<n>`."""
    return template.name or f"#{number}"


def subtask_plan(template: SubtaskTemplate, number: int) -> SubtaskPlan:
    prompt = template.prompt.inline if template.prompt.inline is not None else template.prompt.name
    return SubtaskPlan(
        key=template_key(template, number),
        prompt=prompt.strip(),
        id=template.id,
        for_each=template.for_each,
        loop_var=template.loop_var,
        required_tools=template.required_tools,
        condition=condition_label(template),
    )


def condition_label(template: SubtaskTemplate) -> str | None:
    condition = template.condition
    if condition is None:
        return None
    if condition.kind is ConditionKind.SKIP_IF_FOUND:
        return f"skipped if {condition.sibling!r} found something"
    return f"runs if {condition.expression}"


def deep_search_plan(pipeline: Pipeline, tool: ToolConfig) -> DeepSearchPlan | None:
    options = tool.options
    if not isinstance(options, DeepSearchOptions):
        return None
    search = pipeline.find_tool(options.search_tool)
    neighbor = (
        pipeline.find_tool(options.neighbor_search_tool) if options.neighbor_search_tool else None
    )
    return DeepSearchPlan(
        max_missing=options.max_missing,
        search_tool=search.name if search else options.search_tool,
        search=search_label(search),
        neighbor_tool=neighbor.name if neighbor else None,
        neighbors=neighbor_label(pipeline, neighbor) if neighbor else None,
    )


def search_label(tool: ToolConfig | None) -> str:
    if tool is None or not isinstance(tool.options, SearchOptions):
        return "not a search tool"
    options = tool.options
    label = f"{options.mode} search of {options.corpus!r}, reads the top {options.top_k} pages"
    limit = options.max_brute_force_page_count
    if limit is None:
        return label + "; every page when no page matches (no max_brute_force_page_count, C31)"
    return label + f"; none when more than {limit} pages match (C31)"


def neighbor_label(pipeline: Pipeline, tool: ToolConfig) -> str:
    if not isinstance(tool.options, NeighborSearchOptions):
        return "not a neighbour search tool"
    options = tool.options
    source = options.source_tool or pipeline.retrieval_tool or "?"
    return f"reads the pages up to {options.window} before and after {source}'s pages"


# --- the deep fallback and the settings ------------------------------------------------------


def fallback_plan(pipeline: Pipeline) -> FallbackPlan | None:
    fallback = pipeline.deep_fallback
    if fallback is None:
        return None
    names = [kind.name for kind in pipeline.prompt_types.types]
    covered = tuple(fallback.prompt_types) or tuple(names)
    gatekeeper = fallback.gatekeeper
    judge = (
        "llm: the LLM judges whether the context is enough"
        if gatekeeper.mode == "llm"
        else f"rule: the context must hold {gatekeeper.min_coverage:.0%} of the important words"
    )
    coordinator = pipeline.find_tool(fallback.coordinator)  # C15: simple or prefixed name
    return FallbackPlan(
        coordinator=coordinator.name if coordinator is not None else fallback.coordinator,
        prompt_types=covered,
        without=tuple(name for name in names if name not in covered),
        gatekeeper=judge,
    )


def settings_lines(pipeline: Pipeline) -> list[str]:
    types = pipeline.prompt_types
    names = ", ".join(kind.name for kind in types.types)
    limits = pipeline.limits
    return [
        f"prompt types: {names} (default {types.default}; classified by {types.classify})",
        f"retrieval tool: {pipeline.retrieval_tool or 'none'} (C27)",
        f"limits: depth {limits.max_depth}, {limits.max_subtasks} subtasks, "
        f"{limits.max_clarification_rounds} clarification rounds",
    ]
