"""`runner test` on the command line: exit codes, options, output files."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from xml.etree import ElementTree

from click.testing import Result

from tests.testing.conftest import COMPARE_RULES

Write = Callable[..., Path]
Cli = Callable[..., Result]

PASSING = (
    COMPARE_RULES
    + """
cases:
  - name: price
    turns:
      - message: What does the KW-620 cost?
        expect: {outcome: answer, answer: 449 EUR}
"""
)
FAILING = PASSING.replace("answer: 449 EUR}", "answer: 999 EUR}")


def test_exit_0_when_every_case_passes(write: Write, cli: Cli, shop: Path) -> None:
    write(PASSING, "tests/a.yaml")
    result = cli("test", shop)
    assert result.exit_code == 0, result.output
    assert "1 passed, 0 failed" in result.output


def test_exit_1_when_a_case_fails(write: Write, cli: Cli) -> None:
    result = cli("test", write(FAILING))
    assert result.exit_code == 1
    assert "answer does not contain '999 EUR'" in result.output


def test_exit_1_when_a_file_cannot_run(write: Write, cli: Cli) -> None:
    result = cli("test", write("cases: []\n"))
    assert result.exit_code == 1
    assert "[S107]" in result.output


def test_exit_2_when_no_test_file_is_found(cli: Cli, shop: Path) -> None:
    result = cli("test", shop)
    assert result.exit_code == 2
    assert "no test-case files found" in result.output


def test_exit_2_for_a_path_that_does_not_exist(cli: Cli, shop: Path) -> None:
    assert cli("test", shop / "missing").exit_code == 2


def test_case_selects_cases_by_name(write: Write, cli: Cli) -> None:
    path = write(PASSING + FAILING.split("cases:\n")[1].replace("name: price", "name: other"))
    selected = cli("test", path, "--case", "PRI")
    assert selected.exit_code == 0 and "other" not in selected.output
    assert cli("test", path, "-k", "nothing like it").exit_code == 2


def test_output_writes_the_report_to_a_file(write: Write, cli: Cli, shop: Path) -> None:
    report = shop / "junit.xml"
    result = cli("test", write(FAILING), "--format", "junit", "--output", report)
    assert result.exit_code == 1
    assert result.output.startswith("1 file, 1 case: 0 passed, 1 failed")
    assert ElementTree.parse(report).getroot().get("failures") == "1"
