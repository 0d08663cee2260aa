"""Smoke tests of bench.faq: its pipeline must stay a valid pipeline over a linked corpus (it
once stopped at R124 because it linked the Python docs in without `follow_symlinks`), and the
whole benchmark runs on a tiny docs folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from runner.config import validate_file


def test_the_faq_pipeline_over_a_linked_corpus_validates(docs: Path, tmp_path: Path) -> None:
    from bench.faq import faq_pipeline

    state = tmp_path / "state"
    state.mkdir()
    (state / "pydocs").symlink_to(docs)  # as runner_scores links the Python docs in
    (docs / "faq.rst.txt").write_text("FAQ\n===\n\nWhy?\n----\n\nBecause.\n", encoding="utf-8")
    path = state / "faq.yaml"
    path.write_text(faq_pipeline(), encoding="utf-8")
    report = validate_file(path)
    assert [d.code for d in report.diagnostics] == []


def test_the_benchmark_runs_on_a_tiny_docs_folder(
    docs: Path, readme_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bench import faq

    (docs / "faq" / "general.rst.txt").write_text(
        "General FAQ\n===========\n\nWhy is it called Python?\n------------------------\n\n"
        "It is named after a comedy show, not after the snake.\n\n"
        "Why must self be explicit?\n--------------------------\n\n"
        "Methods are plain functions: self is their first argument.\n",
        encoding="utf-8",
    )
    monkeypatch.setattr(faq, "PYDOCS", docs)
    faq.main()
    results = json.loads((readme_path.parent / "results" / "faq.json").read_text())
    assert results["questions"] == 2
    assert results["runner"]["at5"] == 1.0  # two distinct questions over seven small pages
    assert results["bm25s_per_section"]["at5"] == 1.0
    assert 0.0 <= results["llama_index_bm25"]["at1"] <= 1.0
    assert "## Python FAQ over all of pydocs" in readme_path.read_text()
