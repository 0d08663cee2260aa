"""The counts checked against real rounds: a scripted round makes exactly the calls counted for
its path when every assumption of the count holds, and the example pipelines' own test cases
never make more calls than the worst case of the path they took."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from runner.config import load_pipeline
from runner.config.model import Pipeline
from runner.explain.calls import PathBound, PathSpec, count_path, worst_cases

from .conftest import requests, say

TOPICS = "params.topics"

# message -> the path the lab pipeline's script sends it along; on each, every assumption of the
# count holds: the suitability test says yes to all, the conditional subtasks run, search
# finds its top_k pages, no tool ends the round early
EXACT_PATHS = [
    pytest.param(
        "What is the valve?",
        PathSpec("question", {}, deep_fallback=False),
        7,
        id="no decomposition, context enough",
    ),
    pytest.param(
        "Tell me deeply about the valve and pump",
        PathSpec("question", {"planner": {TOPICS: 2}, "deep": {"missing": 2}}, deep_fallback=True),
        23,
        id="decomposed, then the deep fallback",
    ),
    pytest.param(
        "hello, tell me about the valve and pump",
        PathSpec("chat", {"planner": {TOPICS: 2}}),
        16,
        id="a prompt type without a fallback",
    ),
]


@pytest.mark.parametrize(("message", "spec", "total"), EXACT_PATHS)
def test_a_scripted_round_makes_exactly_the_calls_counted_for_its_path(
    lab: Path, message: str, spec: PathSpec, total: int
) -> None:
    (result,) = say(lab, message)
    assert result.outcome == "answer", result.error
    counted = count_path(load_pipeline(lab), spec)
    assert requests(result) == Counter(counted.calls)
    assert counted.total == total


@pytest.mark.parametrize(("message", "spec", "total"), EXACT_PATHS)
def test_a_scripted_round_stays_within_the_worst_case_of_its_path(
    lab: Path, message: str, spec: PathSpec, total: int
) -> None:
    (result,) = say(lab, message)
    pipeline = load_pipeline(lab)
    bound = bound_of(pipeline, result.to_json()["tasks"])
    made = requests(result)
    assert sum(made.values()) <= bound.total
    assert bound.total >= total


def test_the_path_without_decomposition_is_exact_in_the_worst_case(lab: Path) -> None:
    # nothing of this path depends on a list's length: its worst case is what a round makes
    (result,) = say(lab, "What is the valve?")
    bound = bound_of(load_pipeline(lab), result.to_json()["tasks"])
    assert requests(result) == Counter(bound.count.calls)


def test_the_example_test_cases_never_make_more_calls_than_their_path_allows(
    examples: Path,
) -> None:
    from runner.app import Runtime
    from runner.testing import find_case_files, load_case_file
    from runner.testing.execute import case_runtime
    from runner.testing.loader import cached_pipeline_loader

    load = cached_pipeline_loader()
    checked: Counter[str] = Counter()
    runtimes: dict[Path, Runtime] = {}
    try:
        for path in find_case_files([examples]):
            case_file, pipeline = load_case_file(path, load)
            if pipeline.path not in runtimes:
                runtimes[pipeline.path] = Runtime.from_pipeline(
                    pipeline, llm_override="offline", cache=False
                )
            for case in case_file.cases:
                runtime = case_runtime(runtimes[pipeline.path], case.llm)
                try:
                    for made, bound, where in asyncio.run(fresh_rounds(runtime, case, path)):
                        assert sum(made.values()) <= bound.total, (where, made, bound.to_json())
                        checked[pipeline.domain] += 1
                finally:
                    runtime.client.close()
    finally:
        for runtime in runtimes.values():
            runtime.close()
    assert checked["support"] >= 20 and checked["hr"] >= 8


async def fresh_rounds(runtime: Any, case: Any, path: Path) -> list[tuple[Counter, PathBound, str]]:
    """Each round of a case that starts from a fresh message, with the calls it made and the
    worst case of the path it took."""
    import tempfile

    from runner.sessions import SessionStore

    rounds = []
    with (
        tempfile.TemporaryDirectory() as folder,
        SessionStore(Path(folder) / "s.sqlite") as store,
    ):
        conversation = runtime.conversation(store)
        for turn in case.turns:
            result = await conversation.say(turn.text)
            if turn.is_answer or result.tasks is None:
                continue  # an answer to a question continues a round: not one question's path
            bound = bound_of(runtime.pipeline, result.tasks)
            rounds.append((requests(result), bound, f"{path.name}: {case.name}: {turn.text}"))
    return rounds


def bound_of(pipeline: Pipeline, root: dict[str, Any]) -> PathBound:
    """The worst case of the path a round took, read from its task tree: the root's prompt
    type, the coordinators that made subtasks, whether the deep fallback ran."""
    fallback = pipeline.deep_fallback.coordinator if pipeline.deep_fallback else None
    owners = {child["owner"] for child in root["children"]}
    deep = fallback in owners or any(tool["name"] == fallback for tool in root["tools"])
    decomposed = owners - {fallback}
    return next(
        bound
        for bound in worst_cases(pipeline)
        if bound.spec.prompt_type == root["prompt_type"]
        and set(bound.decomposes) == decomposed
        and bound.spec.deep_fallback is deep
    )
