"""The served pipeline's health, and running a kept test case.

`report` is what `runner validate` says of the file (each diagnostic with its offending line and
caret) and what `runner explain` draws of it (its mermaid flowchart, drawn in the browser by the
vendored mermaid, readable as text without JavaScript). `run_case_file` runs a test file the way
`runner test` does, so a kept case is shown passing (or not) the moment it is saved.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Finding:
    severity: str
    headline: str
    snippet: str
    hint: str
    line: int


@dataclass
class HealthReport:
    path: Path
    findings: list[Finding] = field(default_factory=list)
    mermaid: str | None = None  # None: the file does not load, so there is nothing to draw

    @property
    def errors(self) -> int:
        return sum(1 for finding in self.findings if finding.severity == "error")

    @property
    def warnings(self) -> int:
        return sum(1 for finding in self.findings if finding.severity == "warning")


def report(pipeline_path: Path) -> HealthReport:
    from runner.config import validate_file
    from runner.documents.diagnostics import snippet
    from runner.explain.mermaid import flowchart

    checked = validate_file(pipeline_path)
    shown = display_path(pipeline_path)
    findings = [
        Finding(
            severity=d.severity.value,
            headline=d.headline().replace(str(d.file), shown, 1),
            snippet=snippet(d),
            hint=d.hint,
            line=d.line,
        )
        for d in checked.diagnostics
    ]
    chart = flowchart(checked.pipeline) if checked.pipeline is not None else None
    return HealthReport(pipeline_path, findings, chart)


def display_path(path: Path) -> str:
    """A path relative to the working folder when it is below it: what the author typed;
    else its folder's name and its own (a page never shows where the machine keeps it)."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(Path(path.parent.name) / path.name)


def schema_link(test_file: Path) -> str:
    """The test-case schema relative to a test file's folder, for its editor modeline."""
    from runner.resources import schema_path

    schema = schema_path("testcase").resolve()
    return Path(os.path.relpath(schema, test_file.parent.resolve())).as_posix()


@dataclass(frozen=True)
class CaseResult:
    name: str
    passed: bool


@dataclass(frozen=True)
class FileRun:
    passed: bool
    cases: list[CaseResult]
    text: str  # `runner test`'s report


def run_case_file(path: Path, case: str | None = None) -> FileRun:
    """`runner test PATH [-k CASE]`, in process."""
    from runner.testing import format_reports, run_files

    reports = run_files([path], select=case)
    cases = [CaseResult(case.case.name, case.passed) for file in reports for case in file.cases]
    return FileRun(all(file.passed for file in reports), cases, format_reports(reports, "text"))
