"""Hostile pipeline files: `runner validate` reports every one with located diagnostics in every
output format; runner itself never fails on one (no internal error, no traceback)."""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree

from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings

from runner.cli import main
from runner.config import ValidationReport, validate_file
from runner.config.formats import format_reports

from .mutations import PIPELINES, copy_of, hostile_file

FUZZ = settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def assert_sound(report: ValidationReport) -> None:
    for diagnostic in report.diagnostics:
        assert not diagnostic.code.startswith("X"), diagnostic.headline()
        assert diagnostic.line >= 1 and diagnostic.col >= 1, diagnostic.headline()
    for fmt in ("text", "json", "github", "junit"):
        output = format_reports([report], fmt)
        if fmt == "json":
            json.loads(output)
        elif fmt == "junit":
            ElementTree.fromstring(output)


@FUZZ
@given(hostile_file(PIPELINES))
def test_every_hostile_pipeline_file_gets_located_diagnostics(copies: Path, hostile) -> None:  # type: ignore[no-untyped-def]
    source, text = hostile
    path = copy_of(source, copies).with_name("_fuzz.yaml")
    path.write_text(text, encoding="utf-8")
    assert_sound(validate_file(path))


@settings(FUZZ, max_examples=10)
@given(hostile_file(PIPELINES))
def test_the_command_exits_0_or_1_on_a_hostile_file(copies: Path, hostile) -> None:  # type: ignore[no-untyped-def]
    source, text = hostile
    path = copy_of(source, copies).with_name("_fuzz_cli.yaml")
    path.write_text(text, encoding="utf-8")
    result = CliRunner().invoke(main, ["validate", str(path)])
    assert result.exit_code in (0, 1), result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
