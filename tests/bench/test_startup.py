"""The start-up benchmark: the generated pipelines are valid, the commands run."""

from __future__ import annotations

from pathlib import Path

from bench import startup
from runner.config import check_files, find_pipeline_files


def test_generated_pipelines_are_valid_without_warnings(tmp_path: Path):
    startup.generate(tmp_path, 3)
    reports = check_files(find_pipeline_files([tmp_path]))
    assert len(reports) == 3
    assert all(report.diagnostics == () for report in reports)


def test_validating_many_files_times_one_runner_process():
    figures = startup.validate_many(2)
    assert figures["files"] == 2
    assert figures["seconds"] > 0


def test_start_up_is_measured_against_python_itself():
    medians = startup.startup(runs=1)
    assert set(medians) == {
        "python -c pass",
        "runner --help",
        "runner validate pipelines/minimal.yaml",
    }


def test_a_process_is_measured_by_its_wall_time_cpu_and_peak_memory():
    import sys

    figures = startup.measured([sys.executable, "-c", "bytearray(50 * 2**20)"], Path.cwd())
    assert figures["wall_s"] > 0 and figures["cpu_s"] >= 0
    assert figures["max_rss_mb"] >= 50  # the 50 MB the child held


def test_the_question_section_lists_each_label_and_search_against_the_targets():
    run = {
        "date": "2026-12-03",
        "commit": "abc1234",
        "machine": {"load_average_1min": 2.0},
        "runs": 3,
        "figures": {
            "keyword": {"wall_s": 0.7, "cpu_s": 0.6, "max_rss_mb": 74.0},
            "hybrid": {"wall_s": 1.1, "cpu_s": 1.0, "max_rss_mb": 150.0},
        },
    }
    results = {
        "command": "python -m bench.startup --question LABEL",
        "question": startup.QUESTION,
        "targets": startup.QUESTION_TARGETS,
        "labels": {"before": run, "after": run},
    }
    text = startup.question_section(results)
    assert text.count("abc1234") == 4 and "1.10 s" in text and "150 MB" in text
    assert "1.5 s and ≤ 200 MB" in " ".join(text.split())


def test_a_question_is_run_over_repeated_docs_paired_with_a_baseline(
    docs: Path, tmp_path: Path, monkeypatch
) -> None:
    from bench.retrieval import ROOT

    (tmp_path / "single").mkdir(), (tmp_path / "paired").mkdir()
    single = startup.run_question(docs, None, 1, None, tmp_path / "single")
    monkeypatch.setattr(startup, "DOCS_PAGES", single["pages"])
    paired = startup.run_question(docs, 2 * single["pages"], 1, ROOT, tmp_path / "paired")
    assert paired["pages"] == 2 * single["pages"]
    assert paired["runner"]["cpu_s"] > 0 and paired["baseline"]["wall_s"] > 0
    results = {"run": {"docs": single, "repeated": paired}, "runs": 1, "baseline": "same"}
    text = startup.run_section(results | {"targets": startup.TARGETS})
    assert f"| {paired['pages']:,} pages |" in text
    paired_only = startup.run_section(
        results | {"run": {"repeated": paired}, "targets": startup.TARGETS}
    )
    assert "after / before" in paired_only and "before (same)" in paired_only


def test_help_and_validate_are_paired_with_the_baselines() -> None:
    from bench.retrieval import ROOT

    medians = startup.startup(runs=1, baseline=ROOT)
    assert {"runner --help (baseline)", "runner validate pipelines/minimal.yaml (baseline)"} < set(
        medians
    )
