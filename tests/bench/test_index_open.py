"""Smoke test of bench.index_open's pipeline: its corpus folder links documents in, as the
benchmark does, and must open (it once stopped at R124's check of links out of the folder)."""

from __future__ import annotations

from pathlib import Path


def test_the_index_open_pipeline_indexes_a_linked_corpus(docs: Path, tmp_path: Path) -> None:
    from bench.index_open import pipeline
    from runner.retrieval import open_corpus

    folder = tmp_path / "bench"
    folder.mkdir()
    (folder / "corpus").symlink_to(docs)
    index = open_corpus(pipeline(folder, "**/*"), "docs")
    assert len(index) > 0


def test_the_benchmark_runs_on_a_tiny_docs_folder(docs: Path, readme_path: Path) -> None:
    import json

    from bench import index_open
    from bench.retrieval import ROOT

    arguments = ["--docs", str(docs), "--sizes", "12,30", "--no-pgdocs", "--opens", "1"]
    index_open.main([*arguments, "--baseline", str(ROOT)])  # paired with itself
    results = json.loads((readme_path.parent / "results" / "index_open.json").read_text())
    assert [figures["pages"] >= int(size) for size, figures in results["sizes"].items()] == [
        True,
        True,
    ]
    assert all(
        figures["open_cold_ms"] > figures["open_ms"] > 0 for figures in results["sizes"].values()
    )
    assert all("baseline" in figures for figures in results["sizes"].values())
    assert "## Index open and the PostgreSQL manual" in readme_path.read_text()
