"""bench/README.md: each benchmark replaces its own section; the summary reads every result."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import readme, staleness, summary, summary_cost


def test_a_section_is_replaced_in_place_and_others_are_kept(readme_path: Path):
    readme.write_section("Retrieval", "retrieval figures")
    readme.write_section("Summary", "first summary")
    readme.write_section("Summary", "second summary")
    text = readme_path.read_text()
    assert text.startswith("# Benchmarks")
    assert "first summary" not in text
    assert text.index("## Summary") < text.index("## Retrieval")  # the fixed order
    assert "retrieval figures" in text


def test_the_summary_flags_a_missed_target_and_names_what_has_not_run(readme_path: Path):
    readme.write_results(
        "startup",
        {
            "startup": {"python -c pass": 0.02, "runner --help": 0.5},
            "validate_many": {"files": 1000, "seconds": 2.0},
            "targets": {"help_over_python_s": 0.15, "validate_files_s": 3.0},
        },
    )
    text = summary.section()
    assert "| `runner --help` over `python -c pass` | 480 ms |  | ≤ 150 ms | **missed**" in text
    assert "| `runner validate` of 1,000 files, one call | 2.00 s |  | < 3 s | met |" in text
    assert "Not run yet: multipart, overhead, retrieval" in text


def test_every_section_and_result_is_stamped_with_the_commit_and_the_load(readme_path: Path):
    readme.write_section("Retrieval", "retrieval figures")
    path = readme.write_results("retrieval", {"figure": 1})
    head = readme.git("rev-parse", "HEAD")
    assert head and f"_Measured at commit `{head[:10]}`" in readme_path.read_text()
    stamped = json.loads(path.read_text())["stamp"]
    assert stamped["commit"] == head and len(stamped["load_average"]) == 3


def test_a_figure_is_stale_once_the_code_it_measures_changed_after_its_commit():
    head = readme.git("rev-parse", "HEAD")
    changed = readme.git("log", "-1", "--format=%H", "--", "runner")
    before = readme.git("rev-parse", f"{changed}^") if changed else None
    if not (head and before):
        pytest.skip("needs the repository's git history (a clone, not an export)")
    assert staleness.staleness("startup", {"stamp": {"commit": head}}) is None
    why = staleness.staleness("startup", {"stamp": {"commit": before}})
    assert why is not None and "changed after" in why
    assert staleness.staleness("startup", {}) == "not stamped with the commit it measured"


def test_the_summary_marks_the_rows_of_a_stale_benchmark(readme_path: Path):
    results = {
        "startup": {"python -c pass": 0.02, "runner --help": 0.05},
        "validate_many": {"files": 1000, "seconds": 2.0},
        "targets": {"help_over_python_s": 0.15, "validate_files_s": 3.0},
    }
    readme.write_results("startup", results | {"stamp": {"commit": None}})
    text = summary.section()
    assert "| ≤ 150 ms | met, **stale** |" in text
    assert "- `startup`: not stamped with the commit it measured" in text


def test_the_summary_gives_runner_run_against_its_baseline_and_targets():
    figures = {"wall_s": 0.4, "cpu_s": 0.3, "peak_mb": 50}
    before = {"wall_s": 0.8, "cpu_s": 0.7, "peak_mb": 80}
    results = {
        "targets": {"run_wall_s": 0.5, "run_cpu_s": 0.35},
        "baseline": "old",
        "run": {"docs": {"pages": 8379, "runner": figures, "baseline": before}},
    }
    [row] = summary_cost.run_rows(results)
    assert row[1:] == [
        "400 / 300 ms",
        "before (old) 800 / 700 ms",
        "≤ 500 / 350 ms (idle machine)",
        "met",
    ]
