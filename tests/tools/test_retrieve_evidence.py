"""A retrieval's evidence for the gatekeeper (runner.tools.evidence). A corpus without page
vectors gives none: the retrieve tool's result and trace carry none, and the offline gatekeeper
decides on words alone, as before. Over page vectors it weighs the first page the tool's own
search returned and how far its keyword and vector rankings agree (an index stand-in below;
tests/embed/test_gatekeeper_evidence.py has the corpus with vectors)."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

from runner.app import Runtime
from runner.engine.state import SessionState
from runner.retrieval.corpus import ScoredPage
from runner.retrieval.pages import Page
from runner.tools.evidence import retrieval_evidence

CORPUS = Path(__file__).parents[1] / "retrieval" / "corpora" / "appliances"
PIPELINE = """\
version: 1
domain: appliances
llm: {provider: offline}
corpora:
  manuals: {path: manuals, pages: {max_words: 60}}
retrieval_tool: manuals_rag
deep_fallback:
  coordinator: deep_search
  gatekeeper: {mode: llm}
tools:
  - {name: manuals_rag, kind: retrieve, corpus: manuals, top_k: 3}
  - {name: manuals_search, kind: search, corpus: manuals, top_k: 3}
  - {name: deep_search, kind: deep_search, search_tool: manuals_search, max_missing: 1}
"""


def test_c27_without_page_vectors_the_gatekeeper_reads_words_only(tmp_path: Path) -> None:
    shutil.copytree(CORPUS, tmp_path / "manuals")
    (tmp_path / "pipeline.yaml").write_text(PIPELINE, encoding="utf-8")
    runtime = Runtime.open(tmp_path / "pipeline.yaml", build_indexes=True)
    state = SessionState.new("words", runtime.pipeline)
    with runtime:
        result = asyncio.run(
            runtime.orchestrator().run_round(state, "How often should I descale the kettle?")
        )
    events = result.trace.events if result.trace is not None else []
    retrieval = next(event for event in events if event["event"] == "retrieval")
    gatekeeper = next(event for event in events if event["event"] == "gatekeeper")
    assert retrieval["pages"] and "evidence" not in retrieval
    assert gatekeeper["reason"].startswith("the context covers")
    assert "retrieval evidence" not in gatekeeper["reason"]
    assert all(
        "evidence" not in entry.data for _, entries in state.buffer.items() for entry in entries
    )


def test_issue_33_a_retrieval_searches_and_weighs_its_evidence_in_one_hop(
    tmp_path: Path, monkeypatch: Any
) -> None:
    shutil.copytree(CORPUS, tmp_path / "manuals")
    (tmp_path / "pipeline.yaml").write_text(PIPELINE, encoding="utf-8")
    sent: list[str] = []
    to_thread = asyncio.to_thread

    async def counted(call: Any, *args: Any, **kwargs: Any) -> Any:
        sent.append(getattr(call, "__qualname__", repr(call)))
        return await to_thread(call, *args, **kwargs)

    runtime = Runtime.open(tmp_path / "pipeline.yaml", build_indexes=True)
    state = SessionState.new("hops", runtime.pipeline)
    monkeypatch.setattr(asyncio, "to_thread", counted)
    with runtime:
        asyncio.run(runtime.orchestrator().run_round(state, "How often do I descale the kettle?"))
    retrieval = ("RetrieveTool.", "by_parts", "retrieval_evidence")
    assert len([name for name in sent if name.startswith(retrieval)]) == 1


# --- the evidence is of the pages the tool's own search returned (runner.tools.evidence) -----


class _Vectors:
    model = "all-MiniLM-L6-v2"
    precision = "int8"


class _Index:
    """An index whose keyword, vector and hybrid rankings and page cosines are given."""

    vectors = _Vectors()

    def __init__(self, rankings: dict[str, list[str]], cosines: dict[str, float]) -> None:
        self.rankings, self.cosines = rankings, cosines

    def search(
        self, query: str, top_k: int, *, mode: str, rerank: bool = True, sections: bool = True
    ) -> list[Any]:
        return [_hit(node_id) for node_id in self.rankings[mode][:top_k]]

    def cosine(self, query: str, node_id: str) -> float:
        return self.cosines[node_id]


def _hit(node_id: str) -> ScoredPage:
    document, page = node_id.split("#")
    return ScoredPage(Page(node_id, document, int(page), "Manual", "", "text"), 1.0)


RANKINGS = {
    "keyword": ["a.md#1", "c.md#1", "d.md#1"],
    "vector": ["b.md#1", "c.md#1", "e.md#1"],
}
COSINES = {"a.md#1": 0.21, "b.md#1": 0.73, "c.md#1": 0.5, "e.md#1": 0.4, "f.md#1": 0.3}
INDEX: Any = _Index(RANKINGS, COSINES)  # a stand-in for a CorpusIndex


def test_c27_hybrid_evidence_weighs_the_page_hybrid_search_ranked_first() -> None:
    hybrid = [_hit("b.md#1"), _hit("a.md#1"), _hit("c.md#1")]
    evidence = retrieval_evidence(INDEX, "q", 3, hybrid, "hybrid")
    assert evidence is not None
    assert evidence["first_page_cosine"] == 0.73  # b's, not the keyword ranking's first (a)
    assert evidence["ranking"] == "hybrid"


def test_c27_agreement_is_of_the_keyword_and_vector_rankings_whatever_the_search_returned() -> None:
    hybrid = [_hit("b.md#1"), _hit("e.md#1"), _hit("f.md#1")]
    evidence = retrieval_evidence(INDEX, "q", 3, hybrid, "hybrid")
    assert evidence is not None
    assert evidence["agreement"] == 1  # c: in both rankings' top 3, though not returned


def test_c27_keyword_evidence_is_the_keyword_pages_among_the_vectors_best() -> None:
    keyword = [_hit(node_id) for node_id in RANKINGS["keyword"]]
    evidence = retrieval_evidence(INDEX, "q", 3, keyword, "keyword")
    assert evidence == {
        "first_page_cosine": 0.21,
        "agreement": 1,
        "top_k": 3,
        "ranking": "keyword",
    }


def test_c27_a_search_that_returned_nothing_gives_no_evidence() -> None:
    assert retrieval_evidence(INDEX, "q", 3, [], "hybrid") is None
