"""The LLM calls one round makes along one path, step by step in the orchestrator's order
(runner/engine/) and by what each tool kind calls (runner/tools/):

- `prompt_type`: 1 when there is more than one prompt type and `classify: llm`, else 0;
- `decompose`: 1 per coordinator with an extraction that runs on the root; every coordinator
  runs there once and never again below (C11–C12: subtasks inherit the names that ran and the
  prompt type), except the deep fallback's, which runs only through the fallback (C28);
- `suitability`: 1 per task without required tools that has a candidate left to the LLM
  (`activation: suitability`), 0 for a forced task (C13);
- `extract`: 1 per run of a prompt tool with `parameters`, of a lookup with `match: params`, or
  of an `mcp` tool (at most: none when its server's tool takes nothing left to extract, which
  only the server knows);
- `tool`: 1 per run of a prompt tool;
- `gatekeeper`: 1 on the root when the prompt type has a deep fallback and the gatekeeper is
  `llm`;
- `missing_info`: 1 per run of a deep search coordinator;
- `read_page`: a search asked by a coordinator (on a subtask, C22) reads its top_k pages, none
  when more pages match than `max_brute_force_page_count`, and every page of its corpus when
  none matches and it has no such limit (C31); a neighbour search asked by a coordinator reads
  up to 2 × window pages around each page its source tool put in the buffer;
- `compose`: 1 per deep search coordinator that made subtasks, once they close (C20e);
- `answer`: 1 for the final answer (C33).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from runner.config.model import (
    ActivationMode,
    DeepSearchOptions,
    LookupOptions,
    McpOptions,
    NeighborSearchOptions,
    Output,
    PromptOptions,
    RetrieveOptions,
    SearchOptions,
    ToolConfig,
    ToolKind,
)
from runner.engine.activation import admits
from runner.explain.overview import ANSWERING_KINDS
from runner.explain.paths import MISSING, PathModel, PathSpec
from runner.llm.types import Purpose

PURPOSES: tuple[str, ...] = tuple(purpose.value for purpose in Purpose)


@dataclass(frozen=True)
class Exit:
    """A way the round may end before the final answer, and the calls made by then, at most."""

    tool: str
    outcome: str  # "answer" (C25) | "question" (C24)
    calls: int

    def to_json(self) -> dict[str, Any]:
        return {"tool": self.tool, "outcome": self.outcome, "calls": self.calls}


@dataclass(frozen=True)
class PathCount:
    """The LLM calls along one concrete path, at most."""

    calls: Mapping[str, int]  # purpose -> calls
    subtasks: Mapping[str, int]  # coordinator -> subtasks it made that were kept
    exits: tuple[Exit, ...] = ()
    uncounted: tuple[str, ...] = ()  # what the count leaves out (python tools, …)
    scan_reads: int = 0  # read_page calls that only a full scan makes (C31)
    full_scans: tuple[str, ...] = ()  # the search tools that may scan a whole corpus

    @property
    def total(self) -> int:
        return sum(self.calls.values())


@dataclass(frozen=True)
class _Subtask:
    owner: str
    forced: bool  # it has required tools (C13), even if none of them is known
    tools: tuple[ToolConfig, ...]  # the known required tools, by priority


class Walk:
    """The calls one round makes along a path, step by step in the orchestrator's order."""

    def __init__(self, model: PathModel, spec: PathSpec) -> None:
        self.model = model
        self.pipeline = model.pipeline
        self.spec = spec
        self.calls: Counter[str] = Counter()
        self.pages: Counter[str] = Counter()  # tool -> pages its results put in the buffer
        self.subtasks: Counter[str] = Counter()
        self.exits: dict[tuple[str, str], Exit] = {}
        self.uncounted: dict[str, None] = {}
        self.scan_reads = 0
        self.full_scans: dict[str, None] = {}

    def run(self) -> PathCount:
        self._classify()
        normal = self.model.root_coordinators(self.spec.prompt_type)
        made = self._coordinator_step(normal, room=self.model.limits.max_subtasks)
        for subtask in made:
            self._subtask(subtask)
        self._activate(requested=False, made={subtask.owner for subtask in made})
        if self.model.has_fallback(self.spec.prompt_type):
            self._deep_fallback(room=self.model.limits.max_subtasks - len(made))
        self._call(Purpose.ANSWER)
        return PathCount(
            calls={purpose: self.calls[purpose] for purpose in PURPOSES if self.calls[purpose]},
            subtasks=dict(self.subtasks),
            exits=tuple(self.exits.values()),
            uncounted=tuple(self.uncounted),
            scan_reads=self.scan_reads,
            full_scans=tuple(self.full_scans),
        )

    def _call(self, purpose: Purpose, count: int = 1) -> None:
        self.calls[purpose.value] += count

    def _exit(self, tool: ToolConfig, outcome: str) -> None:
        # the latest place the tool can end the round: the most calls made by then
        self.exits[(tool.name, outcome)] = Exit(tool.name, outcome, sum(self.calls.values()))

    def _classify(self) -> None:
        types = self.pipeline.prompt_types
        if len(types.types) > 1 and types.classify != "rule":
            self._call(Purpose.PROMPT_TYPE)

    # --- coordinators and subtasks (C4–C12) -------------------------------------------------

    def _coordinator_step(self, coordinators: Sequence[ToolConfig], room: int) -> list[_Subtask]:
        """Each coordinator on the root, by priority; the subtasks kept within `room` (C4)."""
        made: list[_Subtask] = []
        for tool in coordinators:
            if not self.model.may_decompose(tool, self.spec.prompt_type):
                continue
            self._decompose_call(tool)
            items = self.spec.decomposes.get(tool.name)
            if items is None:
                continue
            kept = self._planned(tool, items)[: max(room - len(made), 0)]
            self.subtasks[tool.name] += len(kept)
            made.extend(kept)
        return made

    def _decompose_call(self, tool: ToolConfig) -> None:
        if tool.decompose is not None:
            if tool.decompose.extract is not None:
                self._call(Purpose.DECOMPOSE)
        elif isinstance(tool.options, DeepSearchOptions):
            self._call(Purpose.MISSING_INFO)
        elif tool.kind is ToolKind.PYTHON:
            self.uncounted[f"{tool.name}: whether a python tool decomposes, and how"] = None

    def _planned(self, tool: ToolConfig, items: Mapping[str, int]) -> list[_Subtask]:
        """The subtasks a coordinator makes, in its order, for the given loop lengths."""
        if tool.decompose is not None:
            made = []
            for template in tool.decompose.subtasks:
                count = items.get(template.for_each, 0) if template.for_each else 1
                made.extend([self._shape(tool, template.required_tools)] * count)
            return made
        if isinstance(tool.options, DeepSearchOptions):
            options = tool.options
            pair = [options.search_tool]
            if options.neighbor_search_tool:
                pair.insert(0, options.neighbor_search_tool)  # `.n` before `.s` (C29)
            return [
                self._shape(tool, (name,)) for _ in range(items.get(MISSING, 0)) for name in pair
            ]
        return []

    def _shape(self, owner: ToolConfig, required: Sequence[str]) -> _Subtask:
        known = [self.pipeline.find_tool(name) for name in required]
        tools = self.model.in_priority_order(tool for tool in known if tool is not None)
        return _Subtask(owner.name, bool(required), tuple(tools))

    def _subtask(self, subtask: _Subtask) -> None:
        """A subtask: no coordinator runs on it (C11–C12); its forced tools, or the usual
        activation. A coordinator asked: its execution text carries the marker (C21–C22)."""
        if subtask.forced:
            for tool in subtask.tools:
                self._run(tool, requested=True, made_subtasks=False)
            return
        self._activate(requested=True, made=set())

    # --- activation and tools (C13–C15a, C20e, C27) -----------------------------------------

    def _activate(self, *, requested: bool, made: set[str]) -> None:
        """A task without required tools: every candidate (the LLM says yes to all), the
        retrieval tool, and each coordinator that builds its result from the subtasks it made
        here (C20e)."""
        prompt_type = self.spec.prompt_type
        candidates = [
            tool
            for tool in self.pipeline.tools
            if tool.activation.mode is not ActivationMode.COORDINATOR_ONLY
            and tool is not self.model.retrieval
            and tool is not self.model.fallback
            and admits(tool, prompt_type)
        ]
        if any(tool.activation.mode is ActivationMode.SUITABILITY for tool in candidates):
            self._call(Purpose.SUITABILITY)
        chosen = list(candidates)
        retrieval = self.model.retrieval
        if retrieval is not None and admits(retrieval, prompt_type):
            chosen.append(retrieval)
        chosen.extend(
            tool for tool in self.model.tools if tool.name in made and _activates_after(tool)
        )
        for tool in self.model.in_priority_order(chosen):
            self._run(tool, requested=requested, made_subtasks=tool.name in made)

    def _run(self, tool: ToolConfig, *, requested: bool, made_subtasks: bool) -> None:
        """One run of a tool: the calls its kind makes (runner/tools/<kind>.py)."""
        options = tool.options
        if isinstance(options, PromptOptions):
            self._prompt(tool, options)
        elif isinstance(options, LookupOptions):
            if options.match == "params":
                self._call(Purpose.EXTRACT)
            if options.clarify is not None:
                self._exit(tool, "question")
        elif isinstance(options, McpOptions):
            self._call(Purpose.EXTRACT)
            if options.clarify is not None:
                self._exit(tool, "question")
        elif isinstance(options, RetrieveOptions):
            self._rewrite(options)
            self.pages[tool.name] += options.top_k
        elif isinstance(options, SearchOptions):
            self._search(tool, options, requested)
        elif isinstance(options, NeighborSearchOptions):
            self._neighbors(tool, options, requested)
        elif isinstance(options, DeepSearchOptions):
            if made_subtasks:  # C20e: composes its subtasks' answers (none: no call)
                self._call(Purpose.COMPOSE)
        elif tool.kind is ToolKind.PYTHON:
            self.uncounted[f"{tool.name}: a python tool's own LLM calls"] = None
        if _output(tool, requested) is Output.ANSWER:
            self._exit(tool, "answer")

    def _prompt(self, tool: ToolConfig, options: PromptOptions) -> None:
        from runner.tools.prompt import required_parameters

        if options.parameters is not None:
            self._call(Purpose.EXTRACT)
        if options.clarify is not None and required_parameters(options):
            self._exit(tool, "question")
        self._call(Purpose.TOOL)

    def _search(self, tool: ToolConfig, options: SearchOptions, requested: bool) -> None:
        """C31–C32: on the normal branch the top pages, no call; asked by a coordinator, it
        reads its top_k pages with the LLM, or none past the limit, or the whole corpus when no
        page matches and there is no limit."""
        self._rewrite(options)
        if not requested:
            self.pages[tool.name] += options.top_k
            return
        limit = options.max_brute_force_page_count
        if limit is not None:
            self._call(Purpose.READ_PAGE, min(options.top_k, limit))
            self.pages[tool.name] += options.top_k
            return
        corpus = self.model.corpus_pages(options.corpus)
        # the top_k pages when some match; every page of the corpus when none does
        self._call(Purpose.READ_PAGE, corpus)
        self.scan_reads += max(corpus - options.top_k, 0)
        self.full_scans[tool.name] = None
        self.pages[tool.name] += corpus

    def _rewrite(self, options: RetrieveOptions | SearchOptions) -> None:
        """`rewrite: true`: the query restated before the search (none with the offline
        provider, which has no words of its own)."""
        if options.rewrite and self.pipeline.llm.provider != "offline":
            self._call(Purpose.REWRITE)

    def _neighbors(self, tool: ToolConfig, options: NeighborSearchOptions, requested: bool) -> None:
        source_name = options.source_tool or self.pipeline.retrieval_tool
        source = self.pipeline.find_tool(source_name) if source_name else None
        around = 2 * options.window * (self.pages[source.name] if source is not None else 0)
        if requested:
            self._call(Purpose.READ_PAGE, around)
        self.pages[tool.name] += around

    def _deep_fallback(self, room: int) -> None:
        """C27–C28 on the root: the gatekeeper, then (when it says not enough) the fallback
        coordinator's step and subtasks, then the coordinator itself on the root (C20e)."""
        fallback = self.pipeline.deep_fallback
        assert fallback is not None
        if fallback.gatekeeper.mode == "llm":
            self._call(Purpose.GATEKEEPER)
        coordinator = self.model.fallback
        if not self.spec.deep_fallback or coordinator is None:
            return
        made = self._coordinator_step([coordinator], room)
        for subtask in made:
            self._subtask(subtask)
        self._run(coordinator, requested=False, made_subtasks=bool(made))


def _activates_after(tool: ToolConfig) -> bool:
    """C20e: a declarative coordinator with `activate_after_subtasks`, or a deep search."""
    if tool.decompose is not None:
        return tool.decompose.activate_after_subtasks
    return isinstance(tool.options, DeepSearchOptions)


def _output(tool: ToolConfig, requested: bool) -> Output:
    """What the engine makes of a non-empty result (C23, C25): `coordinator_output` when a
    coordinator asked; a search tool's answer to a coordinator is guaranteed context (C32)."""
    if requested and tool.coordinator_output is not None:
        return tool.coordinator_output
    if requested and tool.kind in ANSWERING_KINDS:
        return Output.GUARANTEED
    return tool.output
