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
