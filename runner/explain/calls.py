"""Worst-case LLM calls per question, along each path through a pipeline.

The paths and what the count knows of the pipeline are in `paths.py`; the calls along one path,
purpose by purpose, in `walk.py`. The bound of a path is the largest count over every length its
`for_each` lists and missing pieces can have (bounded by `limits.max_subtasks` and
`max_missing`): more items make more subtasks, but past `max_subtasks` the later ones are
dropped (C4), so every length is tried.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from runner.config.model import Pipeline
from runner.explain.paths import PathModel, PathSpec
from runner.explain.walk import PURPOSES, Exit, PathCount, Walk

__all__ = [
    "ASSUMPTIONS",
    "PURPOSES",
    "Exit",
    "PathBound",
    "PathCount",
    "PathSpec",
    "count_path",
    "worst_cases",
]

MAX_COMBINATIONS = 100_000  # item counts tried per path, at most


ASSUMPTIONS: tuple[str, ...] = (
    "one fresh message (a clarification's answer runs the tool that asked again, and then "
    "whatever was left)",
    "every keyword or pattern rule matches and the suitability test says yes to every "
    "candidate; every conditional subtask runs",
    "no tool ends the round early: a terminal answer or a clarifying question only removes "
    "calls (see 'ends early')",
    "every for_each list and every deep search's missing pieces have the length that costs "
    "most, within limits.max_subtasks and max_missing",
    "retrieve and search tools return top_k pages; a neighbour search reads 2 × window pages "
    "around each of its source tool's pages",
    "each call counts once: retries of a failed or invalid reply (llm.max_retries, "
    "llm.structured_retries) come on top",
    "python tools' own calls and subtasks are not counted",
)


@dataclass(frozen=True)
class PathBound:
    """The worst case of a path: its spec with the item counts that cost most, and that count."""

    spec: PathSpec
    decomposes: tuple[str, ...]  # the coordinators that decompose on this path
    has_fallback: bool  # the prompt type has a deep fallback (C28)
    count: PathCount

    @property
    def total(self) -> int:
        return self.count.total

    def to_json(self) -> dict[str, Any]:
        count = self.count
        return {
            "prompt_type": self.spec.prompt_type,
            "decomposes": {name: count.subtasks.get(name, 0) for name in self.decomposes},
            "items": {name: dict(loops) for name, loops in self.spec.decomposes.items()},
            "deep_fallback": self.spec.deep_fallback if self.has_fallback else None,
            "calls": {purpose: count.calls.get(purpose, 0) for purpose in PURPOSES},
            "total": count.total,
            "full_scan_reads": count.scan_reads,
            "full_scans": list(count.full_scans),
            "ends_early": [item.to_json() for item in count.exits],
            "uncounted": list(count.uncounted),
        }


def worst_cases(pipeline: Pipeline) -> list[PathBound]:
    """Every path of the pipeline with its worst case, by prompt type in file order."""
    model = PathModel(pipeline)
    return [
        _worst(model, prompt_type, decomposing, deep)
        for prompt_type in model.type_names
        for decomposing in model.decomposition_choices(prompt_type)
        for deep in model.fallback_choices(prompt_type)
    ]


def count_path(pipeline: Pipeline, spec: PathSpec) -> PathCount:
    """The calls along one concrete path, at most (exactly, when every assumption holds)."""
    return Walk(PathModel(pipeline), spec).run()


def _worst(model: PathModel, prompt_type: str, decomposing: Sequence[str], deep: bool) -> PathBound:
    """The path's count at the loop lengths that cost most."""
    coordinators = [model.named(name) for name in decomposing]
    if deep and model.fallback is not None and model.loops_known(model.fallback):
        coordinators.append(model.fallback)
    loops = [(tool.name, key, most) for tool in coordinators for key, most in model.loops(tool)]
    best: tuple[PathSpec, PathCount] | None = None
    for lengths in _lengths(loops):
        items: dict[str, dict[str, int]] = {tool.name: {} for tool in coordinators}
        for (name, key, _most), length in zip(loops, lengths, strict=True):
            items[name][key] = length
        spec = PathSpec(prompt_type, items, deep)
        count = Walk(model, spec).run()
        if best is None or count.total > best[1].total:
            best = (spec, count)
    assert best is not None
    spec, count = best
    if _combinations(loops) > MAX_COMBINATIONS:
        note = (
            f"too many for_each combinations ({_combinations(loops)}) to try each: the "
            "lists were taken empty and full only"
        )
        count = replace(count, uncounted=(*count.uncounted, note))
    return PathBound(spec, tuple(decomposing), model.has_fallback(prompt_type), count)


def _lengths(loops: Sequence[tuple[str, str, int]]) -> Iterable[tuple[int, ...]]:
    if _combinations(loops) > MAX_COMBINATIONS:
        return itertools.product(*((0, most) for _name, _key, most in loops))
    return itertools.product(*(range(most + 1) for _name, _key, most in loops))


def _combinations(loops: Sequence[tuple[str, str, int]]) -> int:
    total = 1
    for _name, _key, most in loops:
        total *= most + 1
    return total
