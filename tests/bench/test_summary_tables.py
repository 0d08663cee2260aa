"""The summary row of the lookup-table benchmark reads its largest table's later run."""

from __future__ import annotations

from bench.summary_cost import tables_rows


def _case(rows: int, later_s: float) -> dict:
    run = {"seconds": later_s, "peak_mb": 38.0, "in_process": {"seconds": 0.001}}
    return {"rows": rows, "later": run, "memory": {"seconds": 6.7, "peak_mb": 790.0}}


def test_the_row_names_the_largest_table_and_meets_the_target_under_a_second() -> None:
    [row] = tables_rows({"cases": [_case(100_000, 0.4), _case(1_000_000, 0.3)]})
    assert row[0].startswith("lookup table of 1,000,000 rows")
    assert row[-1] == "met"


def test_a_later_run_of_a_second_or_more_misses_the_target() -> None:
    [row] = tables_rows({"cases": [_case(1_000_000, 1.2)]})
    assert row[-1].startswith("**missed**")
