"""What a round needs of the pipeline it runs: the `RoundSetup` protocol.

The orchestrator holds what every round of a pipeline shares (its tools by priority, its
coordinators, its forced-tool plans) and starts each round; the round's rooms read those through
this protocol rather than the orchestrator's class, so they never import the module that
imports them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from runner.config.model import Pipeline, ToolConfig
    from runner.engine.protocols import Tool
    from runner.engine.state import SessionState
    from runner.llm.prompts import Prompts
    from runner.llm.types import LLMClient

# a forced-tool plan: the tools forced, by priority; the names that are no tool; all the names
ForcedPlan = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]


class RoundSetup(Protocol):
    """The shared, per-pipeline part of every round (runner.engine.orchestrator builds it)."""

    pipeline: Pipeline
    tools: Mapping[str, Tool]
    prompts: Prompts
    llm: LLMClient | None
    checkpoint: Callable[[SessionState], None] | None
    configs: Mapping[str, ToolConfig]  # every tool the round can run, in file order
    consumers: set[str]  # the tools that consume the buffer's context
    parallel: set[str]  # coordinators whose subtasks may run concurrently
    coordinators: list[str]  # the coordinator step's coordinators, by priority (C8)

    def by_priority(self, names: Iterable[str]) -> list[str]:
        """Lower priority first; ties in file order."""
        ...

    def forced_tools(self, names: frozenset[str]) -> ForcedPlan:
        """C13–C15: the tools a task's required names force (see the orchestrator)."""
        ...
