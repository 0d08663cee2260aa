"""`runner test`: YAML test cases for pipelines, run with a scripted or replayed LLM.

    files = find_case_files(["pipelines/"])
    reports = run_files(files)                 # one CaseFileReport per file, a CaseReport per case
    print(format_reports(reports, "text"))     # or "junit", "github"

A test-case file (`schemas/testcase.schema.json`, docs/testing.md) names its pipeline, the LLM
its cases use (scripted rules, a cassette, or offline) and its cases: turns of a conversation,
each with what the round must produce. Loading reuses runner.config's YAML loader and
diagnostics, so a broken test file is reported the way `runner validate` reports a pipeline.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from runner.testing.execute import CaseFileReport, CaseReport, TestRun, TurnReport
from runner.testing.loader import CaseFileError, find_case_files, load_case_file
from runner.testing.report import FORMATS, format_reports

__all__ = [
    "FORMATS",
    "CaseFileError",
    "CaseFileReport",
    "CaseReport",
    "TestRun",
    "TurnReport",
    "find_case_files",
    "format_reports",
    "load_case_file",
    "run_files",
]


def run_files(
    paths: Iterable[Path],
    *,
    allow_python: bool = False,
    select: str | None = None,
    index_progress: Callable[[str, str, int, int], None] | None = None,
    llm_override: str | None = None,
) -> list[CaseFileReport]:
    """Run every case of the given test-case files (or only those whose name contains
    `select`), each with its own LLM or, with `llm_override`, with that one."""
    return TestRun(
        allow_python=allow_python,
        select=select,
        index_progress=index_progress,
        llm_override=llm_override,
    ).run(paths)
