"""The tables benchmark's harness: whole `runner run`s on a small table, through the store and
through the index in memory, each finding both rows it is asked about (the child checks it)."""

from __future__ import annotations

from pathlib import Path

from bench import tables


def test_each_case_answers_and_the_in_memory_case_warns_that_it_cannot_store(
    tmp_path: Path,
) -> None:
    case = tables.bench_size(tmp_path, 200, repeats=1)
    assert case["memory"]["warned"] and not case["later"]["warned"]
    assert case["memory"]["in_process"]["index"] == "KeyIndex"
    assert case["later"]["in_process"]["index"] == "StoredIndex"
    assert len(tables.stores(tmp_path)) == 1 and case["store_mb"] > 0


def test_the_report_has_a_row_per_size_and_run() -> None:
    figures = {"seconds": 0.5, "peak_mb": 40.0, "warned": False, "runs": []}
    case = {"rows": 100, "table_mb": 0.1, "store_mb": 0.2}
    inside = {**figures, "in_process": {"seconds": 0.0021, "index": "StoredIndex"}}
    results = {
        "date": "2026-12-01",
        "python": "3.11",
        "cpus": 2,
        "load_average_1min": 1.0,
        "repeats": 1,
        "baseline": {**figures, "seconds": 0.3},
        "cases": [{**case, "memory": figures, "first": figures, "later": inside}],
    }
    text = tables.render(results)
    assert "| 100 | store: later run (opens it) | 0.50 s | 0.20 s | 2.1 ms | 40 MB | 1.0× |" in text
