"""A retrieve tool over a corpus with page vectors hands the gatekeeper its evidence (C27;
runner.tools.evidence): the question's cosine with the first page the tool's own search returned
and how many keyword pages are among the vectors' top k; the
trace's `retrieval` event shows it and the offline gatekeeper's reason weighs it."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import pytest

from runner.app import Runtime
from runner.config import load_pipeline
from runner.engine.state import SessionState
from runner.retrieval import open_corpus
from tests.embed.appliances import CORPUS

PIPELINE = """\
version: 1
domain: appliances
llm: {provider: offline}
corpora:
  manuals:
    path: manuals
    pages: {max_words: 60}
    embedding: {model: all-MiniLM-L6-v2}
retrieval_tool: manuals_rag
deep_fallback:
  coordinator: deep_search
  gatekeeper: {mode: llm}
tools:
  - {name: manuals_rag, kind: retrieve, corpus: manuals, top_k: 3, mode: MODE}
  - {name: manuals_search, kind: search, corpus: manuals, top_k: 3}
  - {name: deep_search, kind: deep_search, search_tool: manuals_search, max_missing: 1}
"""
QUESTION = "how do I get rid of the chalky build-up inside my kettle?"


def pipeline(tmp_path: Path, mode: str) -> Path:
    shutil.copytree(CORPUS, tmp_path / "manuals")
    path = tmp_path / "pipeline.yaml"
    path.write_text(PIPELINE.replace("MODE", mode), encoding="utf-8")
    return path


def events(path: Path, question: str) -> list[dict[str, Any]]:
    runtime = Runtime.open(path, build_indexes=True)
    state = SessionState.new("evidence", runtime.pipeline)
    with runtime:
        result = asyncio.run(runtime.orchestrator().run_round(state, question))
    return result.trace.events if result.trace is not None else []


def first(found: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    return next(event for event in found if event["event"] == kind)


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
def test_c27_the_evidence_is_of_the_pages_the_tool_s_own_search_ranked(
    embedder, tmp_path, mode
) -> None:
    path = pipeline(tmp_path, mode)
    retrieval = first(events(path, QUESTION), "retrieval")
    evidence = retrieval["evidence"]
    returned = [f"{page['document']}#{page['page']}" for page in retrieval["pages"]]
    index = open_corpus(load_pipeline(path), "manuals", build=False)
    keyword = {hit.page.node_id for hit in index.search(QUESTION, 3, mode="keyword")}
    vector_top = {
        hit.page.node_id for hit in index.search(QUESTION, 3, mode="vector", rerank=False)
    }
    assert evidence["first_page_cosine"] == pytest.approx(
        index.cosine(QUESTION, returned[0]), abs=1e-4
    )
    assert evidence["agreement"] == len(keyword & vector_top)
    assert evidence["top_k"] == 3
    assert evidence["ranking"] == mode


def test_c27_the_offline_gatekeeper_weighs_the_evidence(embedder, tmp_path) -> None:
    found = events(pipeline(tmp_path, "keyword"), QUESTION)
    evidence = first(found, "retrieval")["evidence"]
    reason = first(found, "gatekeeper")["reason"]
    assert f"cosine with the first keyword page {evidence['first_page_cosine']:.2f}" in reason
    assert f"{evidence['agreement']} of the 3 keyword pages among the vectors' best 3" in reason


def test_an_index_gives_any_page_s_cosine_with_the_question(embedder, tmp_path) -> None:
    index = open_corpus(load_pipeline(pipeline(tmp_path, "keyword")), "manuals")
    every = index.search(QUESTION, len(index.pages()), mode="vector", rerank=False)
    by_cosine = {hit.page.node_id: hit.score for hit in every}
    for page in index.pages():
        if page.node_id in by_cosine:
            assert index.cosine(QUESTION, page.node_id) == pytest.approx(
                by_cosine[page.node_id], abs=1e-5
            )
    assert index.cosine(QUESTION, "no-such-page#1") is None


def test_a_pipeline_without_a_deep_fallback_computes_no_evidence(embedder, tmp_path) -> None:
    path = pipeline(tmp_path, "hybrid")
    text = path.read_text(encoding="utf-8")
    start, end = text.index("deep_fallback:"), text.index("tools:")
    tools = [line for line in text[end:].splitlines() if "deep_search" not in line]
    path.write_text(text[:start] + "\n".join(tools) + "\n", encoding="utf-8")
    retrieval = first(events(path, QUESTION), "retrieval")
    assert retrieval["pages"] and "evidence" not in retrieval
