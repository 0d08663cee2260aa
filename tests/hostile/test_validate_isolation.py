"""`runner validate` over a folder: one file's failure is its own. A bug of runner met while
checking one file is reported against that file (X001), a checker process that dies takes no
other file's report with it (X002), and every other file is still checked."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

import runner.config
from runner.cli import main
from runner.config import check_files, validate_file

PIPELINE = "domain: shop\ntools:\n  - name: faq\n    kind: prompt\n    prompt: Answer {{ task }}\n"


def pipelines(folder: Path, count: int) -> list[Path]:
    files = []
    for index in range(count):
        path = folder / f"p{index:02d}.yaml"
        path.write_text(PIPELINE, encoding="utf-8")
        files.append(path)
    return files


@pytest.fixture
def crashing_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """The semantic checks crash on p03.yaml only (in the forked workers too)."""
    import runner.config.checks as semantic

    real = semantic.check

    def check(document, named=None):  # type: ignore[no-untyped-def]
        if document.path.name == "p03.yaml":
            raise TypeError("unhashable type: 'list'")
        return real(document, named)

    monkeypatch.setattr(semantic, "check", check)


@pytest.mark.usefixtures("crashing_check")
def test_a_crash_while_checking_a_file_is_an_internal_error_reported_against_it(
    tmp_path: Path,
) -> None:
    report = validate_file(pipelines(tmp_path, 4)[3])
    (diagnostic,) = report.diagnostics
    assert diagnostic.code == "X001" and diagnostic.file.name == "p03.yaml"
    assert "TypeError: unhashable type: 'list'" in diagnostic.message
    assert "please report" in diagnostic.hint


@pytest.mark.usefixtures("crashing_check")
def test_in_a_pool_a_crashing_file_does_not_end_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runner.config, "PARALLEL_FROM", 4)
    monkeypatch.setattr(runner.config.os, "cpu_count", lambda: 2)
    reports = check_files(pipelines(tmp_path, 8))
    codes = {report.path.name: tuple(d.code for d in report.diagnostics) for report in reports}
    assert codes.pop("p03.yaml") == ("X001",)
    assert set(codes.values()) == {()} and len(codes) == 7


def test_a_worker_that_dies_is_reported_against_the_file_it_was_checking(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = runner.config.validate_file

    def validate(path: Path):  # type: ignore[no-untyped-def]
        if path.name == "p05.yaml":
            os._exit(9)  # as a crash in C or the out-of-memory killer would end it
        return real(path)

    monkeypatch.setattr(runner.config, "validate_file", validate)
    monkeypatch.setattr(runner.config, "PARALLEL_FROM", 4)
    monkeypatch.setattr(runner.config.os, "cpu_count", lambda: 2)
    reports = check_files(pipelines(tmp_path, 8))
    assert [report.path.name for report in reports] == [f"p{i:02d}.yaml" for i in range(8)]
    codes = {report.path.name: tuple(d.code for d in report.diagnostics) for report in reports}
    assert codes.pop("p05.yaml") == ("X002",)
    assert set(codes.values()) == {()}


@pytest.mark.usefixtures("crashing_check")
def test_the_command_reports_the_internal_error_and_exits_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runner.config, "PARALLEL_FROM", 4)
    pipelines(tmp_path, 6)
    result = CliRunner().invoke(main, ["validate", str(tmp_path)])
    assert result.exit_code == 1
    assert "p03.yaml: error: internal error while checking this file" in result.output
    assert "6 files checked: 5 valid, 1 invalid" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
