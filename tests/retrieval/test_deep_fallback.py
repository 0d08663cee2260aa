"""The deep fallback end to end (C27–C33): a YAML pipeline over a test corpus, the real runtime
and orchestrator, and the scripted LLM provider."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from runner.app import Runtime
from runner.engine.outcome import RoundResult
from runner.engine.state import SessionState
from runner.trace import Trace

from .conftest import copy_corpus

QUESTION = "Why does the kettle light glow?"  # BM25's best page: kettle.md#2 ("Boiling")


def found(answer: str) -> dict[str, Any]:
    return {"found": True, "answer": answer}


# The scripted LLM. Missing pieces: "descaling interval" (answered by kettle.md#3, a neighbour
# of the retrieved page, so its full search is skipped) and "toaster warranty" (no neighbour
# answers it, so its full search runs and finds toaster.md#3).
SCRIPT: list[dict[str, Any]] = [
    {"purpose": "gatekeeper", "reply": {"enough": False, "reason": "no descaling info"}},
    {"purpose": "missing_info", "reply": {"missing": ["descaling interval", "toaster warranty"]}},
    {
        "purpose": "read_page",
        "task": "descaling",
        "prompt": "citric acid",
        "reply": found("Every four weeks, with citric acid."),
    },
    {
        "purpose": "read_page",
        "task": "warranty",
        "prompt": "three-year",
        "reply": found("Three years from purchase."),
    },
    {"purpose": "read_page", "reply": {"found": False, "answer": ""}},
    {"purpose": "compose", "reply": "Descale monthly; the toaster warranty is three years."},
    {"purpose": "answer", "reply": "The light shows the kettle is heating."},
]


def write_pipeline(tmp_path: Path, script: list[dict[str, Any]], **changes: Any) -> Path:
    copy_corpus(tmp_path)
    pipeline: dict[str, Any] = {
        "version": 1,
        "domain": "home",
        "llm": {"provider": "scripted", "script": script},
        "prompt_types": {
            "default": "question",
            "types": {
                "question": "a question about an appliance",
                "smalltalk": {"description": "greetings", "keywords": ["hello"]},
            },
        },
        "corpora": {"manuals": {"path": "corpus/appliances", "pages": {"max_words": 60}}},
        "retrieval_tool": "manual_rag",
        "deep_fallback": {"coordinator": "deep_search", "prompt_types": ["question"]},
        "tools": [
            {"name": "manual_rag", "kind": "retrieve", "corpus": "manuals", "top_k": 1},
            {
                "name": "manual_search",
                "kind": "search",
                "corpus": "manuals",
                "top_k": 2,
                "activation": "coordinator_only",
                "max_brute_force_page_count": 40,
            },
            {
                "name": "manual_neighbors",
                "kind": "neighbor_search",
                "corpus": "manuals",
                "activation": "coordinator_only",
            },
            {
                "name": "deep_search",
                "kind": "deep_search",
                "search_tool": "manual_search",
                "neighbor_search_tool": "manual_neighbors",
            },
        ],
        **changes,
    }
    path = tmp_path / "pipeline.yaml"
    path.write_text(yaml.safe_dump(pipeline, sort_keys=False), encoding="utf-8")
    return path


@dataclass
class Round:
    result: RoundResult
    trace: Trace
    runtime: Runtime
    state: SessionState

    @property
    def data(self) -> dict[str, Any]:
        return self.result.to_json()

    def tasks(self) -> dict[str, dict[str, Any]]:
        return tasks_by_number(self.data["tasks"])

    def purposes(self) -> list[str]:
        return [call.purpose for call in self.runtime.client.calls]

    def entry(self, key: str) -> dict[str, Any]:
        """The data of the one result stored under a completion key."""
        [result] = self.state.buffer.snapshot()[key]
        return dict(result.data)


def run_round(path: Path, message: str = QUESTION) -> Round:
    runtime = Runtime.open(path)
    trace = Trace()
    state = SessionState.new("s1", runtime.pipeline)
    try:
        result = asyncio.run(runtime.orchestrator().run_round(state, message, trace=trace))
    finally:
        runtime.close()
    return Round(result, trace, runtime, state)


def tasks_by_number(tree: dict[str, Any]) -> dict[str, dict[str, Any]]:
    found_tasks = {tree["task_no"]: tree}
    for child in tree["children"]:
        found_tasks.update(tasks_by_number(child))
    return found_tasks


@pytest.fixture
def deep_round(tmp_path: Path) -> Round:
    return run_round(write_pipeline(tmp_path, SCRIPT))


def test_c27_gatekeeper_judges_the_primary_context_of_the_root(deep_round: Round) -> None:
    [gate] = deep_round.trace.of("gatekeeper")
    assert gate["task"] == "1" and gate["enough"] is False
    assert deep_round.entry("1:manual_rag")["pages"] == ["kettle.md#2"]


def test_c28_deep_search_runs_its_pairs_and_adds_a_guaranteed_supplement(deep_round: Round) -> None:
    tasks = deep_round.tasks()
    assert list(tasks) == ["1", "1.1.n", "1.1.s", "1.2.n", "1.2.s"]
    deep_tool = next(t for t in tasks["1"]["tools"] if t["name"] == "deep_search")
    assert deep_tool["guaranteed"] is True and deep_tool["reason"] == "deep_fallback"
    assert deep_round.data["answer"] == "The light shows the kettle is heating."


def test_c29_search_skipped_when_its_neighbour_search_found_the_answer(deep_round: Round) -> None:
    tasks = deep_round.tasks()
    assert tasks["1.1.s"]["skipped"] is True  # 1.1.n read kettle.md#3 and found it
    assert tasks["1.2.s"]["skipped"] is False  # 1.2.n found nothing: the full search ran
    decisions = {e["task"]: e["decision"] for e in deep_round.trace.of("subtask.decision")}
    assert decisions == {"1.1.s": "skip", "1.2.s": "run"}


def test_c29_neighbour_searches_read_the_pages_around_the_retrieved_one(deep_round: Round) -> None:
    found = deep_round.entry("1.1.n:manual_neighbors")
    assert found["pages"] == ["kettle.md#3"] and found["read"] == 2  # kettle.md#1 and #3
    assert deep_round.entry("1.2.n:manual_neighbors") == {"pages": [], "read": 2}


def test_c31_c32_the_full_search_reads_its_top_candidates(deep_round: Round) -> None:
    search = deep_round.entry("1.2.s:manual_search")
    # toaster.md#1 and #3 and kettle.md#4 share a word with it: top_k=2 of them are read
    assert search["candidates"] == 3 and search["read"] == 2
    assert search["pages"] == ["toaster.md#3"]
    assert deep_round.purposes().count("read_page") == 2 + 2 + 2


def test_c30_search_tools_never_activate_on_the_normal_branch(deep_round: Round) -> None:
    root = deep_round.data["tasks"]
    assert [tool["name"] for tool in root["tools"]] == ["manual_rag", "deep_search"]


def test_c33_the_answer_lists_every_page_it_drew_on(deep_round: Round) -> None:
    sources = {(s["document"], s["page"]) for s in deep_round.data["sources"]}
    assert sources == {("kettle.md", 2), ("kettle.md", 3), ("toaster.md", 3)}


def test_c33_the_supplement_lists_only_the_pages_its_composed_text_cites(tmp_path: Path) -> None:
    # compose sees [1] kettle.md#3 (1.1.n) and [2] toaster.md#3 (1.2.s) and cites only [2]
    compose = {"purpose": "compose", "reply": "The toaster warranty is three years [2]."}
    script = [compose if rule["purpose"] == "compose" else rule for rule in SCRIPT]
    done = run_round(write_pipeline(tmp_path, script))
    [supplement] = done.state.buffer.snapshot()["1:deep_search"]
    assert supplement.context == "The toaster warranty is three years [toaster.md p. 3]."
    assert supplement.guaranteed
    # not kettle.md#3: 1.1.n found it, but the composed text does not use it
    assert [(s.document, s.page) for s in supplement.sources] == [("toaster.md", 3)]


def test_c27_enough_context_means_no_deep_search(tmp_path: Path) -> None:
    script = [{"purpose": "gatekeeper", "reply": {"enough": True}}, *SCRIPT[1:]]
    done = run_round(write_pipeline(tmp_path, script))
    assert done.data["tasks"]["children"] == []
    assert done.purposes() == ["gatekeeper", "answer"]


def test_c28_a_prompt_type_without_deep_fallback_gets_none(tmp_path: Path) -> None:
    done = run_round(write_pipeline(tmp_path, SCRIPT), "hello, why does it glow?")
    assert done.data["tasks"]["prompt_type"] == "smalltalk"
    assert done.data["tasks"]["children"] == []
    assert "gatekeeper" not in done.purposes()


def test_rule_gatekeeper_needs_no_llm_call(tmp_path: Path) -> None:
    fallback = {
        "coordinator": "deep_search",
        "prompt_types": ["question"],
        "gatekeeper": {"mode": "rule", "min_coverage": 0.5},
    }
    done = run_round(write_pipeline(tmp_path, SCRIPT, deep_fallback=fallback))
    [gate] = done.trace.of("gatekeeper")
    assert gate["mode"] == "rule" and gate["enough"] is True  # kettle, light, glow: on page 2
    assert done.purposes() == ["answer"]
