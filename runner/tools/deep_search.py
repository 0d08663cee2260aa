"""The `deep_search` kind: the ready deep-search coordinator (C28–C30, C20e).

It runs on a task whose primary context the gatekeeper found not enough (C27–C28; the engine
decides when). Three steps:

1. `decompose`: from the task's question and the context so far it works out what is missing
   (purpose `missing_info`, at most `max_missing` pieces). For each missing piece `i` it adds the
   subtasks `<n>.<i>.n` (neighbour search, forced by `required_tool_names`) and `<n>.<i>.s` (full
   search, conditional) — or only `<n>.<i>.s`, not conditional, when no `neighbor_search_tool` is
   named (C29). Each subtask's prompt is the missing piece itself, a self-contained query.
   Nothing missing: the task is returned unchanged (C1).
2. `decide_conditional`: a `.s` is SKIPPED when its `.n` found anything (a non-empty context
   under `<n>.<i>.n`), else it RUNS (C16, C29).
3. Once the subtasks are closed it is activated on the task as a context consumer (C20e): the
   answers of its `.n` / `.s` subtasks are composed into one supplement (purpose `compose`),
   returned as guaranteed context (C23, C28) with the sources of the answers it cites — all of
   them when it cites none (C33); an empty context when no subtask found anything (no compose
   call then).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from runner.config.model import DeepSearchOptions, ToolConfig
from runner.engine.protocols import PriorContext, ToolEnv
from runner.engine.results import ReasonedDecision, SubtaskDecision, ToolResult
from runner.engine.task import Task, key_task_no
from runner.llm.prompts import passages_from_buffer
from runner.sources import unique_sources
from runner.tools.base import (
    BuiltinTool,
    Call,
    ConsumingTool,
    ToolBuildError,
    consumer_variant,
    place,
)
from runner.tools.declarative import found_under

if TYPE_CHECKING:
    from runner.tools.services import ToolServices

NEIGHBOR_SUFFIX = "n"
SEARCH_SUFFIX = "s"


def of_tasks(prior: PriorContext, task_nos: set[str]) -> PriorContext:
    """The buffer entries produced on the given tasks."""
    return {key: results for key, results in prior.items() if key_task_no(key) in task_nos}


class DeepSearchTool(BuiltinTool):
    activate_after_subtasks = True  # C20e: composes its subtasks' answers on the task itself

    def __init__(self, config: ToolConfig, services: ToolServices) -> None:
        super().__init__(config, services)
        assert isinstance(config.options, DeepSearchOptions)
        self.options = config.options
        self.search_tool = self._tool_name(self.options.search_tool, "search_tool")
        neighbor = self.options.neighbor_search_tool
        self.neighbor_tool = self._tool_name(neighbor, "neighbor_search_tool") if neighbor else None

    def _tool_name(self, name: str, key: str) -> str:
        tool = self.services.pipeline.find_tool(name)
        if tool is None:
            known = ", ".join(t.name for t in self.services.pipeline.tools)
            raise ToolBuildError(
                f"{place(self.config)}: `{key}: {name}` names no tool of the domain (its tools: "
                f"{known}); fix `{key}:`"
            )
        return tool.name

    # --- C28–C29: decomposition ------------------------------------------------------------

    async def decompose(self, task: Task, env: ToolEnv) -> Task:
        question = task.task_prompt  # C20b: never prompt_context
        missing = await env.prompts.missing_info(
            question,
            passages_from_buffer(env.buffer),
            self.options.max_missing,
            template=self.options.missing_template,
        )
        for index, piece in enumerate(missing, 1):
            task.sub_tasks.extend(self._pair(task, index, piece))
        return task

    def _pair(self, parent: Task, index: int, query: str) -> list[Task]:
        stem = f"{parent.task_no}.{index}"
        search = Task(
            task_no=f"{stem}.{SEARCH_SUFFIX}",
            task_prompt=query,
            required_tool_names={self.search_tool},
            conditional=self.neighbor_tool is not None,
            prompt_type=parent.prompt_type,
            depth=parent.depth + 1,
        )
        if self.neighbor_tool is None:
            return [search]
        neighbor = Task(
            task_no=f"{stem}.{NEIGHBOR_SUFFIX}",
            task_prompt=query,
            required_tool_names={self.neighbor_tool},
            prompt_type=parent.prompt_type,
            depth=parent.depth + 1,
        )
        return [neighbor, search]

    def decide_conditional(
        self, parent: Task, next_subtask: Task, completed_so_far: PriorContext, env: ToolEnv
    ) -> SubtaskDecision | ReasonedDecision:
        """C29: skip a `.s` when its `.n` found something; run everything else."""
        stem, _, suffix = next_subtask.task_no.rpartition(".")
        if suffix != SEARCH_SUFFIX:
            return SubtaskDecision.RUN
        neighbour = f"{stem}.{NEIGHBOR_SUFFIX}"
        if found_under(completed_so_far, neighbour):
            return ReasonedDecision(
                SubtaskDecision.SKIP,
                f"the neighbour search {neighbour} already found something, so no full search",
            )
        return ReasonedDecision(
            SubtaskDecision.RUN, f"the neighbour search {neighbour} found nothing: full search"
        )

    # --- C20e, C28: the supplement --------------------------------------------------------

    def own_subtasks(self, task: Task) -> set[str]:
        pattern = re.compile(rf"{re.escape(task.task_no)}\.\d+\.[{NEIGHBOR_SUFFIX}{SEARCH_SUFFIX}]")
        return {sub.task_no for sub in task.sub_tasks if pattern.fullmatch(sub.task_no)}

    async def run(self, call: Call) -> ToolResult:
        answers = passages_from_buffer(of_tasks(call.prior or {}, self.own_subtasks(call.env.task)))
        if not answers:
            return ToolResult.context("")
        supplement = await call.env.prompts.compose(
            call.directive, answers, tool=self.name, template=self.options.compose_template
        )
        # C33: the sources of the answers the supplement cites (all of them when it cites none)
        sources = unique_sources(source for used in supplement.used for source in used.sources)
        return ToolResult.guaranteed_context(supplement.text, sources)  # C28


def build(config: ToolConfig, services: ToolServices) -> ConsumingTool:
    # always a consumer: it builds its result from its subtasks' (C20c, C20e)
    return consumer_variant(DeepSearchTool)(config, services)
