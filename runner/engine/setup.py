"""What a round needs of the pipeline it runs: the `RoundSetup` protocol.

The orchestrator holds what every round of a pipeline shares (its tools by priority, its
coordinators, its forced-tool plans) and starts each round; the round's steps read those through
this protocol (`RoundContext.setup`) rather than the orchestrator's class, so they never import
the module that imports them.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from runner.config.model import Pipeline, ToolConfig
    from runner.engine.protocols import Tool
    from runner.llm.prompts import Prompts
    from runner.llm.types import LLMClient

# a forced-tool plan: the tools forced, by priority; the names that are no tool; all the names
ForcedPlan = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]


class RoundSetup(Protocol):
    """The shared, per-pipeline part of every round (runner.engine.orchestrator builds it)."""

    # read-only (properties): the orchestrator's own are plain attributes, dicts and sets

    @property
    def pipeline(self) -> Pipeline: ...

    @property
    def tools(self) -> Mapping[str, Tool]: ...

    @property
    def prompts(self) -> Prompts: ...

    @property
    def llm(self) -> LLMClient | None: ...

    @property
    def configs(self) -> Mapping[str, ToolConfig]:
        """Every tool the round can run, in file order."""
        ...

    @property
    def consumers(self) -> Collection[str]:
        """The tools that consume the buffer's context (C20c)."""
        ...

    @property
    def parallel(self) -> Collection[str]:
        """Coordinators whose subtasks may run concurrently."""
        ...

    @property
    def coordinators(self) -> Sequence[str]:
        """The coordinator step's coordinators, by priority (C8)."""
        ...

    def by_priority(self, names: Iterable[str]) -> list[str]:
        """Lower priority first; ties in file order."""
        ...

    def forced_tools(self, names: AbstractSet[str]) -> ForcedPlan:
        """C13–C15: the tools a task's required names force (see the orchestrator)."""
        ...
