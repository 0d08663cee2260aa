"""The declarative coordinator: a tool's `decompose` block (C1–C3, C16, C20e).

It wraps a tool of any kind. Its `decompose(task, env)`:
1. extracts parameters from `task_prompt` alone (purpose `decompose`; never `prompt_context`,
   C20b);
2. tests `relevant_if` (default: some parameter has a value); not relevant → the task is
   returned unchanged (C1);
3. relevant → changes the task in place (C2): appends `append_prompt` to `task_prompt` and adds
   one subtask per template (one per item with `for_each`), each with its id, `required_tools`
   (C13), its conditional rule (C16), and the template name and loop variables it was made with.

The orchestrator then fills in `owner_coordinator_name`, `applied_coordinator_names` and
`prompt_context` (C18, C12, C20a). Before a conditional subtask starts, the orchestrator asks
`decide_conditional`, which applies the subtask template's rule: `skip_if_found` or `run_if`.

Everything else (executing, clarifications, direct-call functions such as a lookup's `rows_for`)
is the wrapped tool's; `activate_after_subtasks` makes the wrapped tool a context consumer that
runs on the decomposed task once its subtasks close (C20e).
"""

from __future__ import annotations

from collections.abc import Awaitable, Iterable, Mapping, Sequence
from typing import Any

import jinja2

from runner.config.model import (
    ConditionKind,
    Decompose,
    SubtaskTemplate,
    ToolConfig,
)
from runner.engine.protocols import (
    ContextConsumerBase,
    PriorContext,
    ToolEnv,
    is_context_consumer,
    is_coordinator,
)
from runner.engine.results import (
    Clarification,
    ReasonedDecision,
    SubtaskDecision,
    ToolResult,
)
from runner.engine.task import Task
from runner.llm.types import Purpose
from runner.text.words import content_words
from runner.tools.base import (
    ToolBuildError,
    ToolRunError,
    evaluate,
    is_missing,
    place,
    plain,
    render,
    template_source,
    trace_warning,
)


class DeclarativeCoordinator:
    """A coordinator made of a `decompose` block, around the tool that carries it."""

    def __init__(self, inner: Any, config: ToolConfig) -> None:
        assert config.decompose is not None
        self.inner = inner
        self.name = config.name
        self.config = config
        self.priority = config.priority
        self.plan: Decompose = config.decompose
        self.activate_after_subtasks = self.plan.activate_after_subtasks  # C20e
        self.append_source = (
            template_source(config, self.plan.append_prompt, "append_prompt")
            if self.plan.append_prompt is not None
            else None
        )
        # Each template by the key its subtasks record: its `name`, or `#<n>` (its 1-based
        # place in the block) when it has none, so that every conditional rule finds its own.
        self.templates: dict[str, SubtaskTemplate] = {
            template.name or f"#{number}": template
            for number, template in enumerate(self.plan.subtasks, start=1)
        }
        self.subtask_sources = [
            (key, template, template_source(config, template.prompt, "subtask prompt"))
            for key, template in self.templates.items()
        ]

    # --- the coordinator ---------------------------------------------------------------------

    async def decompose(self, task: Task, env: ToolEnv) -> Task:
        params = await self._extract(task, env)
        base = {"params": params, "task": task.task_prompt, "index": 0}
        if not self._relevant(base):
            return task  # C1: unchanged
        # Build everything first, so that an error leaves the task as it was (C10 restores it
        # too; this way a half-built decomposition never even exists).
        room = max(env.pipeline.limits.max_subtasks - len(task.sub_tasks), 0)
        subtasks, left_out = self._subtasks(task, params, room)
        if left_out:
            env.leave_out_subtasks(left_out)  # C4: counted in the drop warning, never rendered
        addition = ""
        if self.append_source is not None:
            addition = render(self.config, "append_prompt", self.append_source, base).strip()
        if addition:
            task.task_prompt = f"{task.task_prompt.rstrip()}\n{addition}"
        task.sub_tasks.extend(subtasks)  # C2: the same task object, changed in place
        return task

    async def decide_conditional(
        self, parent: Task, next_subtask: Task, completed_so_far: PriorContext, env: ToolEnv
    ) -> SubtaskDecision | ReasonedDecision:
        """C16: the rule of the template that made `next_subtask`; RUN when it has none (C3).
        The reason says it in the block's own terms, for the trace and the Why page."""
        template = self.templates.get(next_subtask.template_name or "")
        if template is None or template.condition is None:
            return SubtaskDecision.RUN
        condition = template.condition
        if condition.kind is ConditionKind.SKIP_IF_FOUND:
            sibling = self.templates.get(condition.sibling or "")
            if sibling is None:
                raise ToolRunError(
                    f"{place(self.config)}: `skip_if_found: {condition.sibling}` names no "
                    "subtask template of this decompose block; give that template `name:`"
                )
            both_loop = template.for_each is not None and sibling.for_each is not None
            paired = paired_siblings(parent, next_subtask, condition.sibling or "", both_loop)
            found = any(found_under(completed_so_far, earlier.task_no) for earlier in paired)
            sibling_name = f"`{condition.sibling}` ({', '.join(t.task_no for t in paired)})"
            if found:
                return ReasonedDecision(
                    SubtaskDecision.SKIP,
                    f"{sibling_name} already found something (skip_if_found)",
                )
            return ReasonedDecision(
                SubtaskDecision.RUN, f"{sibling_name} found nothing (skip_if_found)"
            )
        variables = {
            **next_subtask.loop_vars,
            "parent": task_view(parent),
            "subtask": task_view(next_subtask),
            "completed_so_far": {
                key: [result.to_json() for result in results]
                for key, results in completed_so_far.items()
            },
            "found": lambda prefix: found_with_prefix(completed_so_far, str(prefix)),
        }
        expression = condition.expression or "true"
        run = evaluate(self.config, "run_if", expression, variables)
        if run:
            return ReasonedDecision(SubtaskDecision.RUN, f"`run_if: {expression}` is true")
        return ReasonedDecision(SubtaskDecision.SKIP, f"`run_if: {expression}` is false")

    # --- the wrapped tool's entry points ---------------------------------------------------

    def execute(self, text: str, env: ToolEnv) -> ToolResult | Awaitable[ToolResult]:
        return self.inner.execute(text, env)

    def execute_with_clarification(
        self, text: str, clarification: Clarification, env: ToolEnv
    ) -> ToolResult | Awaitable[ToolResult]:
        return self._inner_method("execute_with_clarification")(text, clarification, env)

    def __getattr__(self, attribute: str) -> Any:
        # Direct-call functions (C26) of the wrapped tool stay reachable through the wrapper.
        if attribute.startswith("_") or attribute == "inner":
            raise AttributeError(attribute)
        return getattr(self.inner, attribute)

    def __repr__(self) -> str:
        return f"<DeclarativeCoordinator {self.name!r} around {self.inner!r}>"

    # --- helpers ---------------------------------------------------------------------------

    def _inner_method(self, method: str) -> Any:
        found = getattr(self.inner, method, None)
        if not callable(found):
            raise ToolRunError(
                f"{place(self.config)}: the orchestrator called {method}(), which "
                f"{type(self.inner).__name__} does not implement"
            )
        return found

    async def _extract(self, task: Task, env: ToolEnv) -> Params:
        extraction = self.plan.extract
        if extraction is None:
            return Params()
        params = await env.prompts.extract(
            Purpose.DECOMPOSE,
            task.task_prompt,  # C20b: never prompt_context
            plain(extraction.schema),
            tool=self.name,
            instruction=self.config.description or self.config.instruction,
            template=extraction.template,
            on_dropped=trace_warning(env),
        )
        properties = extraction.schema.get("properties")
        return Params(params or {}, declared=properties if isinstance(properties, Mapping) else ())

    def _relevant(self, variables: Mapping[str, Any]) -> bool:
        if self.plan.relevant_if is None:
            params = variables["params"]
            return any(not is_missing(value) for value in dict.values(params))
        return bool(evaluate(self.config, "relevant_if", self.plan.relevant_if, variables))

    def _subtasks(
        self, parent: Task, params: Mapping[str, Any], room: int
    ) -> tuple[list[Task], int]:
        """The subtasks, in template and item order, up to `room` (what `limits.max_subtasks`
        leaves on the task); and how many more the loops would have made. Those past the limit
        would be dropped (C4), so they are counted, not rendered: `for_each: range(100000)`
        costs one loop evaluation, not 100,000 prompts."""
        subtasks: list[Task] = []
        left_out = 0
        taken = {task.task_no for task in parent.walk()}
        for key, template, source in self.subtask_sources:
            items = self._loop(template, parent, params)
            made = max(min(len(items), room - len(subtasks)), 0)
            left_out += len(items) - made
            # `index` is the item's 1-based place in `for_each` (1 without one), so that paired
            # templates can share it in their ids ("{{ index }}.n" / "{{ index }}.s", C29)
            for index, item in enumerate(items[:made], start=1):
                loop_vars = {} if template.for_each is None else {template.loop_var: plain(item)}
                running = len(parent.sub_tasks) + len(subtasks) + 1
                variables = {"params": params, "task": parent.task_prompt, "index": index}
                variables.update(loop_vars)
                subtask = self._subtask(parent, template, source, variables, loop_vars, running)
                subtask.template_name = key
                if subtask.task_no in taken:
                    raise ToolRunError(
                        f"{place(self.config)}: subtask id {subtask.task_no!r} is used twice on "
                        f"task {parent.task_no}; make the subtask `id:` template unique per item"
                    )
                taken.add(subtask.task_no)
                subtasks.append(subtask)
        return subtasks, left_out

    def _loop(
        self, template: SubtaskTemplate, parent: Task, params: Mapping[str, Any]
    ) -> Sequence[Any]:
        """The items a template makes subtasks of: one (unused) without `for_each`."""
        if template.for_each is None:
            return [None]
        variables = {"params": params, "task": parent.task_prompt, "index": 0}
        items = evaluate(self.config, "for_each", template.for_each, variables)
        if items is None or isinstance(items, jinja2.Undefined):
            return []  # a list parameter the reply left out: no items
        if isinstance(items, (str, bytes, Mapping)) or not isinstance(items, Sequence):
            raise ToolRunError(
                f"{place(self.config)}: `for_each: {template.for_each}` gave "
                f"{type(items).__name__}, not a list; loop over a list parameter"
            )
        return items

    def _subtask(
        self,
        parent: Task,
        template: SubtaskTemplate,
        source: str,
        variables: Mapping[str, Any],
        loop_vars: dict[str, Any],
        running: int,
    ) -> Task:
        """One subtask; its id is `<parent>.<rendered id>`, by default `<parent>.<running>`."""
        prompt = render(self.config, "subtask prompt", source, variables).strip()
        suffix = (
            render(self.config, "subtask id", template.id, variables).strip()
            if template.id
            else str(running)
        )
        return Task(
            task_no=f"{parent.task_no}.{suffix}",
            task_prompt=prompt,
            important_words=content_words(prompt),
            prompt_type=parent.prompt_type,
            required_tool_names=set(template.required_tools),  # C13
            conditional=template.condition is not None,  # C16
            loop_vars=loop_vars,
            depth=parent.depth + 1,
        )


class Params(dict[str, Any]):
    """Extracted parameters as a decomposition's expressions and templates read them. One the
    reply left out (the schema did not require it) reads as undefined: false, empty, of length
    0, `is defined` false. So `params.products | length >= 2` is false, not an error that
    discards the coordinator; `runner validate` warns where that can happen (R126).

    `declared` are the schema's property names. Such a parameter is read as the parameter even
    when it is named like a method of a mapping (`items`, `values`, `keys`, `get`): templates
    look attributes up before keys, so `params.items` would otherwise be the method, given or
    not. Code reads a Params through `dict`'s own methods (`dict.values(params)`)."""

    def __init__(self, values: Mapping[str, Any] | None = None, declared: Iterable[str] = ()):
        super().__init__(values or {})
        self._declared = frozenset(declared) | frozenset(self)

    def __getattribute__(self, name: str) -> Any:
        if name[:1] != "_" and name in dict.__getattribute__(self, "_declared"):
            return self[name]
        return dict.__getattribute__(self, name)

    def __missing__(self, name: str) -> jinja2.ChainableUndefined:
        return jinja2.ChainableUndefined(name=name)


class ConsumingDeclarativeCoordinator(ContextConsumerBase, DeclarativeCoordinator):
    """The wrapper of a context consumer: the buffer always comes with the call (C20c, C20d)."""

    def execute_with_prior_context(
        self, text: str, prior_context: PriorContext, env: ToolEnv
    ) -> ToolResult | Awaitable[ToolResult]:
        return self.inner.execute_with_prior_context(text, prior_context, env)

    def execute_with_clarification_and_prior_context(
        self,
        text: str,
        clarification: Clarification,
        prior_context: PriorContext,
        env: ToolEnv,
    ) -> ToolResult | Awaitable[ToolResult]:
        method = self._inner_method("execute_with_clarification_and_prior_context")
        return method(text, clarification, prior_context, env)


def wrap(tool: Any, config: ToolConfig) -> Any:
    """The tool as a coordinator when its configuration has `decompose`; else the tool itself."""
    if config.decompose is None:
        return tool
    if is_coordinator(tool):
        raise ToolBuildError(
            f"{place(config)}: it is a coordinator already ({type(tool).__name__} has "
            "decompose()); remove its `decompose:` block or the class's decompose()"
        )
    if is_context_consumer(tool):
        return ConsumingDeclarativeCoordinator(tool, config)
    if config.decompose.activate_after_subtasks:
        raise ToolBuildError(
            f"{place(config)}: `activate_after_subtasks: true` makes it run on the parent with "
            "its subtasks' results, so it must be a context consumer: implement "
            "execute_with_prior_context(text, prior_context, env) (docs/plugins.md)"
        )
    return DeclarativeCoordinator(tool, config)


def task_view(task: Task) -> dict[str, Any]:
    """What conditions see of a task: its identity and text, not its runtime state."""
    return {
        "task_no": task.task_no,
        "task_prompt": task.task_prompt,
        "prompt_type": task.prompt_type,
        "important_words": list(task.important_words),
        "depth": task.depth,
        "template_name": task.template_name,
        "loop_vars": dict(task.loop_vars),
    }


def found_with_prefix(completed_so_far: PriorContext, prefix: str) -> bool:
    """`found(prefix)`: some entry whose completion key starts with `prefix` has context."""
    return any(
        result.context.strip()
        for key, results in completed_so_far.items()
        if key.startswith(prefix)
        for result in results
    )


def found_under(completed_so_far: PriorContext, task_no: str) -> bool:
    """A task or any of its descendants produced non-empty context (C17)."""
    return found_with_prefix(completed_so_far, f"{task_no}:") or found_with_prefix(
        completed_so_far, f"{task_no}."
    )


def paired_siblings(parent: Task, subtask: Task, sibling: str, both_loop: bool) -> list[Task]:
    """The earlier siblings made by the template `sibling` (of the same coordinator) that
    `subtask`'s `skip_if_found` looks at: the one made from the same loop position when both
    templates loop, else every one of them."""
    position = next(
        (i for i, task in enumerate(parent.sub_tasks) if task.task_no == subtask.task_no),
        len(parent.sub_tasks),
    )
    earlier = [
        task
        for task in parent.sub_tasks[:position]
        if task.template_name == sibling
        and task.owner_coordinator_name == subtask.owner_coordinator_name
    ]
    if not both_loop:
        return earlier
    own = [
        task
        for task in parent.sub_tasks[:position]
        if task.template_name == subtask.template_name
        and task.owner_coordinator_name == subtask.owner_coordinator_name
    ]
    loop_position = len(own)  # how many of its own template's subtasks came before it
    return earlier[loop_position : loop_position + 1]
