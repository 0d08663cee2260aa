"""The benches' pipeline (bench/deep_pipeline.py) must stay a valid pipeline over a linked
corpus in each shape the benches write it: bench.eval's plain one, and bench.gatekeeper's with
page vectors, a search mode and its state beside it."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.deep_pipeline import deep_fallback_pipeline
from runner.config import load_pipeline, validate_file


def linked(docs: Path, tmp_path: Path, text: str) -> Path:
    state = tmp_path / "state"
    state.mkdir()
    (state / "docs").symlink_to(docs)  # as the benches link the documents in
    path = state / "bench.yaml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "options",
    [{}, {"mode": "hybrid", "embedding": "all-MiniLM-L6-v2", "state_dir": "."}],
    ids=["eval", "gatekeeper"],
)
def test_the_bench_pipeline_over_a_linked_corpus_validates(
    docs: Path, tmp_path: Path, options: dict[str, str]
) -> None:
    text = deep_fallback_pipeline(domain="docs", corpus="docs", include="**/*.rst.txt", **options)
    report = validate_file(linked(docs, tmp_path, text))
    assert [d.code for d in report.diagnostics] == []


def test_the_retrieve_tool_searches_in_the_mode_asked(docs: Path, tmp_path: Path) -> None:
    text = deep_fallback_pipeline(
        domain="docs", corpus="docs", include="**/*.rst.txt", mode="hybrid"
    )
    pipeline = load_pipeline(linked(docs, tmp_path, text))
    [retrieve] = [tool for tool in pipeline.tools if tool.name == "docs_rag"]
    assert retrieve.options.mode == "hybrid"  # type: ignore[union-attr]
    assert pipeline.corpora["docs"].embedding is None
