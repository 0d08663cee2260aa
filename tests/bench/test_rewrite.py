"""bench.rewrite without the model: where its corpus or SmolLM2's server is missing it still
writes its results and says why it was skipped; with figures, its table has a row a search."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import rewrite, users


def test_a_run_without_its_corpus_writes_why_it_was_skipped(
    readme_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(users, "corpus_source", lambda corpus: f"{corpus} is not here")
    rewrite.main()
    results = json.loads((readme_path.parent / "results" / "rewrite.json").read_text())
    assert results["skipped"] == "pydocs is not here"
    assert "skipped (pydocs is not here)" in readme_path.read_text()


def test_each_search_is_a_row_with_its_gold_at_1_and_5() -> None:
    figures = {"at1": 0.5, "at5": 0.75}
    results = {
        "date": "2026-12-03",
        "machine": {"cpus": 2},
        "set": rewrite.SET,
        "questions": 4,
        "seconds_per_question": 1.5,
        "recall": {"BM25": figures, "BM25 + rewrite": figures},
    }
    text = rewrite.readme_section(results)
    assert "| BM25 + rewrite | 0.500 | 0.750 |" in text
