"""The three output formats of `runner test` (runner/testing/report.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from xml.etree import ElementTree

import pytest

from runner.testing import CaseFileReport, format_reports, run_files
from tests.testing.conftest import COMPARE_RULES

Write = Callable[..., Path]

TWO_CASES = (
    COMPARE_RULES
    + """
cases:
  - name: passes
    turns:
      - message: What does the KW-620 cost?
        expect: {outcome: answer}
  - name: fails
    turns:
      - message: Compare the KD-450 and the KW-620
        expect:
          outcome: clarification
"""
)


@pytest.fixture
def reports(write: Write, monkeypatch: pytest.MonkeyPatch, shop: Path) -> list[CaseFileReport]:
    monkeypatch.chdir(shop)  # paths are shown relative to the current folder
    return run_files([write(TWO_CASES)])


def test_text_shows_each_case_and_a_summary(reports: list[CaseFileReport]) -> None:
    text = format_reports(reports, "text")
    assert text.startswith("cases.yaml (pipeline shop.yaml)")
    assert "  PASS  passes" in text and "  FAIL  fails" in text
    assert text.splitlines()[-1].startswith("1 file, 2 cases: 1 passed, 1 failed")


def test_text_shows_what_differed_and_the_task_tree_of_a_failing_case(
    reports: list[CaseFileReport],
) -> None:
    text = format_reports(reports, "text")
    failure = text[text.index("FAIL  fails") :]
    assert "cases.yaml:17: turn 1, message 'Compare the KD-450 and the KW-620'" in failure
    assert "- outcome: expected clarification, got answer" in failure
    assert "answer: The KD-450 costs 100 EUR more than the KW-620." in failure
    assert "LLM calls: decompose 1, suitability 1, tool 1 (3 in all)" in failure
    assert "task tree:" in failure
    assert "specs — forced, 1 item  (1.1:specs)" in failure
    assert "[skipped]" in failure


def test_junit_has_a_testcase_per_case_and_a_failure_for_the_failing_one(
    reports: list[CaseFileReport],
) -> None:
    root = ElementTree.fromstring(format_reports(reports, "junit"))
    assert root.get("tests") == "2" and root.get("failures") == "1"
    [suite] = root.findall("testsuite")
    assert suite.get("name") == "cases.yaml"
    passed, failed = suite.findall("testcase")
    assert passed.get("name") == "passes" and passed.find("failure") is None
    failure = failed.find("failure")
    assert failure is not None and failed.get("line") == "15"
    assert failure.get("message") == "outcome: expected clarification, got answer"
    assert "task tree:" in (failure.text or "")


def test_junit_reports_an_invalid_file_as_an_error(write: Write) -> None:
    reports = run_files([write("cases: []\n")])
    root = ElementTree.fromstring(format_reports(reports, "junit"))
    assert root.get("errors") == "1"
    error = root.find("testsuite/testcase/error")
    assert error is not None and "S107" in (error.text or "")


def test_github_annotates_the_failing_turn_s_line(reports: list[CaseFileReport]) -> None:
    lines = format_reports(reports, "github").splitlines()
    [annotation] = [line for line in lines if line.startswith("::error")]
    assert annotation.startswith("::error file=cases.yaml,line=17,title=runner test%3A fails::")
    assert "%0A" in annotation and "\n" not in annotation
    assert lines[-1].startswith("1 file, 2 cases")


def test_github_annotates_a_diagnostic_at_its_place(write: Write, shop: Path) -> None:
    reports = run_files([write("cases:\n  - name: x\n    turns:\n      - answer: y\n")])
    [annotation, _summary] = format_reports(reports, "github").splitlines()
    assert annotation.startswith("::error file=")
    assert ",line=4,col=17,title=runner T102::" in annotation
