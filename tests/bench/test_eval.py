"""Smoke tests of bench.eval on a tiny corpus: its pipeline validates over a linked corpus, a
question set is cut or repeated to size with unique ids, and the speed and overhead phases run
`runner eval` end to end."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from runner.config import validate_file


def test_the_eval_pipeline_over_a_linked_corpus_validates(docs: Path, tmp_path: Path) -> None:
    from bench.eval import pipeline

    path = pipeline(tmp_path / "p", "pydocs", docs, "**/*.rst.txt")
    assert [d.code for d in validate_file(path).diagnostics] == []


def test_a_set_repeated_to_size_keeps_its_ids_unique(tmp_path: Path) -> None:
    from bench.eval import QUESTIONS, subset

    target = subset(QUESTIONS / "pydocs-users.csv", tmp_path / "q.csv", 700)
    with target.open(encoding="utf-8", newline="") as handle:
        ids = [row["id"] for row in csv.DictReader(handle)]
    assert len(ids) == len(set(ids)) == 700


def test_the_speed_and_overhead_phases_run_on_a_tiny_corpus(
    docs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import bench.eval as bench_eval

    monkeypatch.setattr(bench_eval, "SPEED_QUESTIONS", 3)
    monkeypatch.setattr(bench_eval, "JOBS", (1, 2))
    monkeypatch.setattr(bench_eval, "ray_speed", lambda *_: {"skipped": "not here"})
    pydocs = bench_eval.pipeline(tmp_path / "p", "pydocs", docs, "**/*.rst.txt")
    rates = bench_eval.speed(tmp_path, pydocs)
    assert set(rates) >= {"latency 0 s, jobs 1", "latency 0.1 s, jobs 2"}
    assert all(rate > 0 for key, rate in rates.items() if key.startswith("latency"))
    found = bench_eval.overhead(tmp_path, pydocs)
    assert found["plain_ms_per_question"] > 0
