"""The example domains and the demo: valid, tested, and doing what the README says."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from runner.config import validate_paths
from runner.demo import STEPS, demo
from runner.testing import find_case_files, load_case_file
from runner.testing.loader import cached_pipeline_loader
from tests.examples_kit import copy_example

PIPELINES = Path(__file__).resolve().parents[2] / "pipelines"


def test_the_example_pipelines_are_valid_without_a_warning() -> None:
    reports = validate_paths([PIPELINES])
    assert {report.path.name for report in reports} >= {"support.yaml", "hr.yaml"}
    assert [d.headline() for report in reports for d in report.diagnostics] == []


def test_the_example_domains_carry_their_test_cases() -> None:
    load = cached_pipeline_loader()
    counts: dict[str, int] = {}
    for path in find_case_files([PIPELINES]):
        case_file, pipeline = load_case_file(path, load)
        counts[pipeline.domain] = counts.get(pipeline.domain, 0) + len(case_file.cases)
    assert counts["support"] >= 20 and counts["hr"] >= 8


def test_the_demo_runs_its_three_questions_as_announced(tmp_path: Path) -> None:
    folder = tmp_path / "support"
    copy_example("support", folder)
    result = CliRunner().invoke(demo, ["--pipeline", str(folder / "support.yaml")])
    assert result.exit_code == 0, result.output
    assert [step.outcome for step in STEPS] == ["answer", "clarification", "answer", "answer"]
    # the decomposed comparison, the question and its answer, the deep fallback
    assert "1.1:product_lookup" in result.output and "[skipped]" in result.output
    assert "? Which Kestrel model is it?" in result.output
    assert "3-year manufacturer's warranty" in result.output
    assert "gatekeeper" in result.output
    # the oven row of the spare-parts table, quoted with its header (issue 29)
    assert "Ovens and hobs — Functional parts: 10 years" in result.output
