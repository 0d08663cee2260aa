"""The recursive orchestrator: `Orchestrator.run_round(state, message) -> RoundResult`.

The orchestrator holds what a pipeline's rounds share (its tools by priority, its coordinators,
its forced-tool plans) and nothing of any round: `runner.app.Runtime` builds one per pipeline and
every round of every session runs on it. A round is `round.run_round`: plain functions of one
`RoundContext` (context.py), each module holding one part of the coordination rules:

    round.py         a round: begin, process one task (C5, C8, C13, C27), end, checkpoints (C24)
    coordinators.py  the coordinator step and its contract (C1–C12, C4's depth limit, C18, C20a)
    subtasks.py      the subtask walk: list order, conditionals, parallel groups (C4–C7, C16–C19)
    activation.py    forced tools, rules, the suitability call, after-subtasks (C13–C15a, C20e)
    execution.py     running one tool: buffer, outputs, clarification, terminal (C7, C20, C23–C25)
    entry_points.py  the entry point a tool is called through (C20c, C20d, C24)
    answer.py        the gatekeeper, the deep fallback and the final answer (C23, C27–C28, C33)
    channels.py      where results, events, questions and LLM calls go: the round or a branch
    collector.py     the garbage collector's full collections, deferred while rounds run

runner/engine/__init__.py maps each rule to the function that keeps it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from collections.abc import Set as AbstractSet
from typing import TYPE_CHECKING

from runner.config.model import Pipeline, ToolConfig
from runner.engine.channels import RoundError
from runner.engine.collector import full_collections_deferred
from runner.engine.coordinators import CoordinatorContractError
from runner.engine.outcome import RoundResult
from runner.engine.protocols import Tool, is_context_consumer, is_coordinator
from runner.engine.round import run_round
from runner.engine.setup import ForcedPlan
from runner.engine.state import SessionState
from runner.engine.subtasks import TRAMPOLINE_LEVELS, parallel_subtasks
from runner.trace import Trace

if TYPE_CHECKING:
    from runner.llm.bound import TaskClient
    from runner.llm.prompts import Prompts
    from runner.llm.types import LLMClient

__all__ = [
    "TRAMPOLINE_LEVELS",
    "CoordinatorContractError",
    "Orchestrator",
    "RoundError",
    "parallel_subtasks",
]


class Orchestrator:
    """Runs rounds of one pipeline. Built once per runtime; holds no per-round state (a
    round's trace and checkpoint are given to `run_round`), so rounds of different sessions
    may share it, concurrently too."""

    def __init__(
        self,
        pipeline: Pipeline,
        tools: Mapping[str, Tool],
        prompts: Prompts,
        *,
        checkpoint: Callable[[SessionState], None] | None = None,
        llm: LLMClient | None = None,
    ) -> None:
        """`checkpoint`: the checkpoint of the rounds `run_round` is given none for."""
        strangers = [name for name in tools if pipeline.find_tool(name) is None]
        if strangers:
            raise ValueError(f"tools {strangers} are not in the pipeline {pipeline.path}")
        self.pipeline = pipeline
        self.tools = dict(tools)
        self.prompts = prompts
        self.llm = llm if llm is not None else getattr(prompts, "client", None)
        self.checkpoint = checkpoint
        # every tool the round can run, in file order (the tie-break of equal priorities)
        self.configs: dict[str, ToolConfig] = {
            config.name: config for config in pipeline.tools if config.name in self.tools
        }
        self._rank = {
            name: (config.priority, index)
            for index, (name, config) in enumerate(self.configs.items())
        }
        # by the one name of a set of one (most are: no frozenset made per task), else the set
        self._forced: dict[str | frozenset[str], ForcedPlan] = {}
        self.consumers = {name for name, tool in self.tools.items() if is_context_consumer(tool)}
        # coordinators whose subtasks may run concurrently: `decompose.parallel`, or a python
        # coordinator's `parallel_subtasks = True`
        self.parallel = {
            name
            for name, tool in self.tools.items()
            if is_coordinator(tool) and parallel_subtasks(tool, self.configs[name])
        }
        # C8: the coordinators of the coordinator step, by priority; the deep fallback's
        # coordinator runs only through the fallback (C28, C30)
        fallback = pipeline.deep_fallback
        self.coordinators = [
            name
            for name in self.by_priority(self.tools)
            if is_coordinator(self.tools[name])
            and (fallback is None or name != fallback.coordinator)
        ]

    def by_priority(self, names: Iterable[str]) -> list[str]:
        """Lower priority first; ties in file order."""
        return sorted(names, key=self._rank.__getitem__)

    def forced_tools(self, names: AbstractSet[str]) -> ForcedPlan:
        """C13–C15: the tools a task's required names force, by priority (a name may be simple
        or domain-prefixed), the names that are no tool of the domain, and all the names,
        sorted. Worked out once per set of names: a coordinator usually forces the same tools
        on many subtasks."""
        key = next(iter(names)) if len(names) == 1 else frozenset(names)
        found = self._forced.get(key)
        if found is None:
            known: list[str] = []
            ignored: list[str] = []
            for name in sorted(names):
                config = self.pipeline.find_tool(name)
                if config is None or config.name not in self.tools:
                    ignored.append(name)
                elif config.name not in known:
                    known.append(config.name)
            plan = (tuple(self.by_priority(known)), tuple(ignored), tuple(sorted(names)))
            found = self._forced[key] = plan
        return found

    async def run_round(
        self,
        state: SessionState,
        message: str | None,
        *,
        trace: Trace | None = None,
        checkpoint: Callable[[SessionState], None] | None = None,
        llm: TaskClient | None = None,
    ) -> RoundResult:
        """One round: a fresh message, the answer to the pending question (C24), or — when the
        stored state is an interrupted round — that round, finished. Its events go to `trace`
        (a new one when None), and `checkpoint` (else the orchestrator's) is given the state
        after every step that must survive a crash; `llm` is the round's LLM client (its call
        records and answer stream: runner.llm.bound), else the orchestrator's records in its
        own list."""
        with full_collections_deferred():  # what the round makes outlives it (collector.py)
            return await run_round(
                self,
                state,
                message,
                trace=trace if trace is not None else Trace(),
                checkpoint=checkpoint if checkpoint is not None else self.checkpoint,
                llm=llm,
            )
