"""The paths through a pipeline that `runner explain` counts calls along, and what the count
needs to know about the pipeline to follow them.

A *path* is: the prompt type the message gets, whether each coordinator that may run on the root
decomposes it, and whether the deep fallback fires. `PathModel` works out, once per pipeline, the
choices that make the paths (C8, C11–C12, C28) and the facts a walk along one path reads: tools
by priority, the loops each coordinator has, the pages of a corpus.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from runner.config.model import DeepSearchOptions, Pipeline, ToolConfig, ToolKind
from runner.engine.activation import admits
from runner.explain.overview import by_priority

MISSING = "missing"  # the loop of a deep search coordinator: the missing pieces it finds


@dataclass(frozen=True)
class PathSpec:
    """One path: the root's prompt type, the coordinators that decompose it with the length of
    each of their loops (`for_each` expression, or MISSING for a deep search), and whether the
    deep fallback fires."""

    prompt_type: str
    decomposes: Mapping[str, Mapping[str, int]] = field(default_factory=dict)
    deep_fallback: bool = False


class PathModel:
    """What the count needs to know about a pipeline, worked out once."""

    def __init__(self, pipeline: Pipeline) -> None:
        self.pipeline = pipeline
        self.limits = pipeline.limits
        self.tools = by_priority(pipeline, pipeline.tools)
        self.priority = {tool.name: index for index, tool in enumerate(self.tools)}
        fallback = pipeline.deep_fallback
        self.fallback = pipeline.find_tool(fallback.coordinator) if fallback else None
        self.retrieval = (
            pipeline.find_tool(pipeline.retrieval_tool) if pipeline.retrieval_tool else None
        )
        self.type_names = [kind.name for kind in pipeline.prompt_types.types]
        self._corpus_pages: dict[str, int] = {}

    # --- the choices that make the paths ---------------------------------------------------

    def root_coordinators(self, prompt_type: str) -> list[ToolConfig]:
        """The coordinators of the root's coordinator step, by priority (C8)."""
        return [
            tool
            for tool in self.tools
            if (tool.is_coordinator or tool.kind is ToolKind.PYTHON)
            and tool is not self.fallback
            and self.may_decompose(tool, prompt_type)
        ]

    def may_decompose(self, tool: ToolConfig, prompt_type: str) -> bool:
        """A coordinator runs on the root unless the prompt type or the depth limit stops it."""
        return admits(tool, prompt_type) and self.limits.max_depth >= 1

    def decomposition_choices(self, prompt_type: str) -> list[tuple[str, ...]]:
        """Every subset of the coordinators that can decompose the root, none first."""
        names = [
            tool.name for tool in self.root_coordinators(prompt_type) if self.loops_known(tool)
        ]
        return [
            tuple(name for name, yes in zip(names, choice, strict=True) if yes)
            for choice in itertools.product((False, True), repeat=len(names))
        ]

    def has_fallback(self, prompt_type: str) -> bool:
        fallback = self.pipeline.deep_fallback
        if fallback is None:
            return False
        return not fallback.prompt_types or prompt_type in fallback.prompt_types

    def fallback_choices(self, prompt_type: str) -> tuple[bool, ...]:
        return (False, True) if self.has_fallback(prompt_type) else (False,)

    def loops_known(self, tool: ToolConfig) -> bool:
        """Declarative and deep search coordinators say what they make; python ones do not."""
        return tool.decompose is not None or isinstance(tool.options, DeepSearchOptions)

    def loops(self, tool: ToolConfig) -> list[tuple[str, int]]:
        """A coordinator's loops and the longest each can usefully be."""
        if tool.decompose is not None:
            keys = dict.fromkeys(t.for_each for t in tool.decompose.subtasks if t.for_each)
            return [(key, self.limits.max_subtasks) for key in keys]
        if isinstance(tool.options, DeepSearchOptions):
            return [(MISSING, tool.options.max_missing)]
        return []

    # --- what a walk looks up ---------------------------------------------------------------

    def named(self, name: str) -> ToolConfig:
        tool = self.pipeline.find_tool(name)
        if tool is None:
            raise ValueError(f"{self.pipeline.path}: no tool named {name!r}")
        return tool

    def in_priority_order(self, tools: Iterable[ToolConfig]) -> list[ToolConfig]:
        unique = {tool.name: tool for tool in tools}
        return sorted(unique.values(), key=lambda tool: self.priority[tool.name])

    def corpus_pages(self, name: str) -> int:
        """How many pages a corpus has. Pages are cut with plain Python
        (runner.retrieval.pages): no index is opened, llama-index is not imported."""
        if name not in self._corpus_pages:
            self._corpus_pages[name] = _count_pages(self.pipeline, name)
        return self._corpus_pages[name]


def _count_pages(pipeline: Pipeline, name: str) -> int:
    """Validation made sure the corpus and its folder exist."""
    from runner.retrieval.navigation import paginate_all
    from runner.retrieval.pages import corpus_files, corpus_folder, read_document

    corpus = pipeline.corpora[name]
    folder = corpus_folder(corpus, pipeline.folder)
    documents = [
        read_document(folder, path, corpus.html_drop)
        for path in corpus_files(folder, corpus.include, corpus.exclude)
    ]
    return len(paginate_all(documents, corpus.max_words))
