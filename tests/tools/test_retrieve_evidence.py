"""A corpus without page vectors gives the gatekeeper no retrieval evidence: the retrieve tool's
result and trace carry none, and the offline gatekeeper decides on words alone, as before
(runner.tools.evidence; tests/embed/test_gatekeeper_evidence.py has the corpus with vectors)."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

from runner.app import Runtime
from runner.engine.state import SessionState

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
