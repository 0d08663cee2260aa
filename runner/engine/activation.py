"""Activation (C13–C15a, C20e): which tools run on a task, and why.

A task with `required_tool_names` runs exactly those (C13–C15); any other task runs the tools
its rules and `always` choose, those the one suitability call on `task_prompt` says yes to
(C20b), the domain's retrieval tool, and — once its subtasks closed — a coordinator that builds
its result from theirs (C20e). A `coordinator_only` tool is never a candidate (C15a).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any

from runner.config.model import ActivationMode, PromptTypes, ToolConfig
from runner.engine.channels import FINISHED_TOOL, Stop, during
from runner.engine.context import RoundContext
from runner.engine.execution import run_tool
from runner.engine.task import Task, TaskStatus
from runner.text.patterns import compile_pattern

# Why a tool was activated on a task (the trace's `activation` event and the result's tree).


FORCED = "forced"  # C13: the task's required_tool_names
SUITABILITY = "suitability"  # the LLM's yes in the task's one suitability call
RULE = "rule"  # the tool's keywords / pattern matched the task prompt
ALWAYS = "always"
RETRIEVAL = "retrieval"  # the domain's retrieval tool on every non-forced task (C27)
AFTER_SUBTASKS = "after_subtasks"  # C20e: the coordinator builds its answer from its subtasks'
DEEP_FALLBACK = "deep_fallback"  # C28: the deep-search coordinator on the root
# ...and why one was not: its decomposition of this task failed (coordinators.py)
DECOMPOSE_FAILED = "decompose_failed"


@cache
def _keyword_pattern(keyword: str) -> re.Pattern[str]:
    # Whole word, case-insensitive; lookarounds instead of \b so that keywords that begin or end
    # with punctuation ("c++", "v2.") still match as whole words.
    return re.compile(rf"(?<!\w){re.escape(keyword)}(?!\w)", re.IGNORECASE)


def rule_matches(keywords: Sequence[str], pattern: str | None, text: str) -> bool:
    """A deterministic rule: any keyword as a whole word, or the pattern (case-insensitive,
    runner/text/patterns.py), in `text`."""
    if any(_keyword_pattern(word).search(text) for word in keywords):
        return True
    return pattern is not None and compile_pattern(pattern).search(text) is not None


def rule_tools(ctx: RoundContext) -> list[ToolConfig]:
    """The pipeline's tools activated by a rule."""
    return [c for c in ctx.setup.configs.values() if c.activation.mode is ActivationMode.RULE]


def matching_rules(rules: Sequence[ToolConfig], text: str) -> set[str]:
    """The names of the tools among `rules` whose rule matches `text` (`rule_matches`)."""
    return {
        config.name
        for config in rules
        if rule_matches(config.activation.keywords, config.activation.pattern, text)
    }


async def rules_holding(ctx: RoundContext, rules: Sequence[ToolConfig], text: str) -> set[str]:
    """`matching_rules`. Any author's pattern among them is matched in a worker thread: a
    pattern that backtracks runs into its time limit there, not on the event loop that serves
    every other round of the process; all of a task's rules go in one hop (a hop costs a
    thread's wake and the loop's), none when the prompt type's hop matched them on this text
    already (`ctx.rules_matched`). Keywords alone (escaped literals) are matched in place."""
    known = ctx.rules_matched.get(text)
    if known is not None:
        return known
    if not any(config.activation.pattern for config in rules):
        return matching_rules(rules, text)
    return await asyncio.to_thread(matching_rules, rules, text)


async def classify_off_loop(ctx: RoundContext, prompt_types: PromptTypes, text: str) -> str:
    """`classify_by_rule`, in a worker thread when a prompt type has a pattern (as above); the
    rules of the pipeline's tools are matched on the same text in the same hop, for the root's
    activation (`ctx.rules_matched`)."""
    if not any(kind.pattern for kind in prompt_types.types):
        return classify_by_rule(prompt_types, text)
    rules = rule_tools(ctx)

    def classified() -> tuple[str, set[str]]:
        return classify_by_rule(prompt_types, text), matching_rules(rules, text)

    kind, matched = await asyncio.to_thread(classified)
    ctx.rules_matched[text] = matched
    return kind


def admits(config: ToolConfig, prompt_type: str | None) -> bool:
    """A tool with `prompt_types` is active only for those types; without, for every type."""
    return not config.prompt_types or prompt_type is None or prompt_type in config.prompt_types


def classify_by_rule(prompt_types: PromptTypes, text: str) -> str:
    """`classify: rule`: the first type whose keywords or pattern match, else the default."""
    for kind in prompt_types.types:
        if (kind.keywords or kind.pattern) and rule_matches(kind.keywords, kind.pattern, text):
            return kind.name
    return prompt_types.default


async def activate(ctx: RoundContext, task: Task) -> Stop | None:
    if task.planned_tools is None:
        forced = task.required_tool_names
        plan = forced_activation(ctx, task) if forced else await plan_activation(ctx, task)
        task.planned_tools = tuple(plan)  # (immutable: the plan is decided once)
        task.tool_reasons.update(plan)
        ctx.save()
    if not task.planned_tools and task.required_tool_names:
        task.status = (
            TaskStatus.FAILED
        )  # [decided] forced, with nothing to run (`forced_activation`)
        return None
    for name in task.planned_tools:
        if task.tool_status.get(name) in FINISHED_TOOL:
            continue  # C24: a completed tool never runs again
        stop = await run_tool(ctx, task, name)
        if stop is not None:
            return stop
    return None


async def plan_activation(ctx: RoundContext, task: Task) -> dict[str, str]:
    """The tools to run on a task that has no forced tools, and why, by priority. Decided
    once per task."""
    chosen: dict[str, str] = {}
    candidates = activation_candidates(ctx, task)
    asked: list[ToolConfig] = []
    rules = [c for c in candidates if c.activation.mode is ActivationMode.RULE]
    holding = await rules_holding(ctx, rules, task.task_prompt) if rules else set()
    for config in candidates:
        mode = config.activation.mode
        if mode is ActivationMode.ALWAYS:
            chosen[config.name] = ALWAYS
        elif mode is ActivationMode.RULE:
            if config.name in holding:
                chosen[config.name] = RULE
        else:
            asked.append(config)
    answers: dict[str, bool] = {}
    if asked:  # one call for all of them, on task_prompt alone (C20b)
        with during("suitability (LLM purpose)"):
            reply = await ctx.prompts_for(task).suitability(task.task_prompt, asked)
        answers = known_answers(ctx, reply, asked)
        chosen.update({name: SUITABILITY for name, yes in answers.items() if yes})
    retrieval = ctx.pipeline.retrieval_tool
    configs = ctx.setup.configs
    if (
        retrieval is not None
        and retrieval in configs
        and admits(configs[retrieval], task.prompt_type)
    ):
        chosen.setdefault(retrieval, RETRIEVAL)
    for sub in task.sub_tasks:  # C20e
        owner = sub.owner_coordinator_name
        if owner and activates_after_subtasks(ctx, owner):
            chosen[owner] = AFTER_SUBTASKS
    plan = {name: chosen[name] for name in ctx.setup.by_priority(chosen)}
    ctx.emit(
        "activation",
        task.task_no,
        mode="selected",
        candidates=[c.name for c in candidates],
        suitability=dict(answers) if asked else None,
        activated=[{"tool": n, "reason": r} for n, r in plan.items()],
        ignored=[],
    )
    return plan


def forced_activation(ctx: RoundContext, task: Task) -> dict[str, str]:
    """C13–C15: exactly the required tools, by simple or prefixed name; no suitability call,
    no retrieval tool beside them. An unknown name made at run time is ignored, with a
    warning; [decided] when every name is unknown, forced activation has nothing to run
    and the task fails (it does not fall back to the suitability test: the coordinator
    meant these tools alone)."""
    known, ignored, required = ctx.setup.forced_tools(task.required_tool_names)
    if not known:
        names = ", ".join(repr(name) for name in ignored)
        ctx.fail(
            "tasks",
            task.task_no,
            f"it requires only tools the domain {ctx.pipeline.domain!r} does not have "
            f"({names}): forced activation has nothing to run, so the task failed (C13–C15)",
        )
    for name in ignored if known else ():
        ctx.warn(
            f"task {task.task_no} requires tool {name!r}, which the domain "
            f"{ctx.pipeline.domain!r} does not have; it is ignored (C15)",
            task.task_no,
        )
    ctx.emit(
        "activation",
        task.task_no,
        mode=FORCED,
        candidates=required,  # (tuples, shared: the trace makes them lists, record_json)
        suitability=None,
        activated=forced_activated(known),
        ignored=ignored,
    )
    return dict.fromkeys(known, FORCED)


@cache
def forced_activated(known: tuple[str, ...]) -> tuple[dict[str, str], ...]:
    """The `activated` field of a forced activation of these tools: one tuple per set of tools,
    shared by the events of every task that forces them (the trace makes it a list of copies
    when its events are read, record_json), so that a task node leaves the collector nothing
    to walk for it."""
    return tuple({"tool": name, "reason": FORCED} for name in known)


def activation_candidates(ctx: RoundContext, task: Task) -> list[ToolConfig]:
    """Who may be activated on a non-forced task, in file order: not coordinator_only
    (C15a), not the retrieval tool (added apart), not the deep fallback coordinator (C30),
    and admitted by its prompt_types."""
    fallback = ctx.pipeline.deep_fallback
    excluded = {ctx.pipeline.retrieval_tool, fallback.coordinator if fallback else None}
    return [
        config
        for config in ctx.setup.configs.values()
        if config.activation.mode is not ActivationMode.COORDINATOR_ONLY
        and config.name not in excluded
        and admits(config, task.prompt_type)
        and task.tool_reasons.get(config.name) != DECOMPOSE_FAILED
    ]


def known_answers(
    ctx: RoundContext, reply: Mapping[str, Any], asked: Sequence[ToolConfig]
) -> dict[str, bool]:
    """The suitability reply by simple tool name; a tool the reply leaves out is a no."""
    answers = {config.name: False for config in asked}
    for name, value in reply.items():
        config = ctx.pipeline.find_tool(name)
        if config is not None and config.name in answers:
            answers[config.name] = bool(value)
    return answers


def activates_after_subtasks(ctx: RoundContext, name: str) -> bool:
    flag = getattr(ctx.setup.tools[name], "activate_after_subtasks", None)
    if flag is not None:
        return bool(flag)
    decompose = ctx.setup.configs[name].decompose
    return decompose is not None and decompose.activate_after_subtasks
