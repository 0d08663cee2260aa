"""Smoke test of bench.faq's pipeline: it must stay a valid pipeline over a linked corpus (it
once stopped at R124 because it linked the Python docs in without `follow_symlinks`)."""

from __future__ import annotations

from pathlib import Path

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
