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
