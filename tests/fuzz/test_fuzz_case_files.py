"""Hostile test-case files: `runner test` reports each with located diagnostics or runs it; a
problem is the file's or the case's, never an internal error, and every report format is
well-formed."""

from __future__ import annotations

from pathlib import Path
from xml.etree import ElementTree

from hypothesis import HealthCheck, given, settings

from runner.testing import format_reports, run_files

from .mutations import CASE_FILES, copy_of, hostile_file


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(hostile_file(CASE_FILES))
def test_every_hostile_case_file_is_reported_or_run(copies: Path, hostile) -> None:  # type: ignore[no-untyped-def]
    source, text = hostile
    path = copy_of(source, copies).with_name("_fuzz.yaml")
    path.write_text(text, encoding="utf-8")
    reports = run_files([path])
    for report in reports:
        for diagnostic in report.diagnostics:
            assert diagnostic.line >= 1 and diagnostic.col >= 1, diagnostic.headline()
        for error in [report.error, *(case.error for case in report.cases)]:
            assert "internal error" not in (error or ""), error
    for fmt in ("text", "github", "junit"):
        output = format_reports(reports, fmt)
        if fmt == "junit":
            ElementTree.fromstring(output)
