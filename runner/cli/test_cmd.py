"""`runner test PATH...`: run the test cases of pipelines with a scripted or replayed LLM.

Exit 0 when every case passed, 1 when a case failed or a test file could not run, 2 for a usage
error (no test-case file found, an unknown option).
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

EXIT_FAILED = 1


@click.command("test")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "junit", "github"]),
    default="text",
    show_default=True,
    help="text for people, junit for CI test reports, github for workflow annotations.",
)
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the report to this file instead of stdout (e.g. junit.xml).",
)
@click.option(
    "--case",
    "-k",
    "select",
    metavar="TEXT",
    help="Run only the cases whose name contains TEXT (case-insensitive).",
)
@click.option(
    "--llm",
    "llm",
    metavar="PROVIDER[:MODEL][@URL]",
    help="Run every case on this LLM instead of its own, e.g. "
    "openai_like:smollm2@http://127.0.0.1:8080/v1 (write such cases' expectations for any "
    "model: tools run, outcomes, no wording).",
)
@click.option(
    "--allow-python",
    is_flag=True,
    envvar="RUNNER_ALLOW_PYTHON",
    help="Allow `python` tools to import and run their code (also RUNNER_ALLOW_PYTHON=1).",
)
def command(
    paths: tuple[Path, ...],
    fmt: str,
    output: Path | None,
    select: str | None,
    llm: str | None,
    allow_python: bool,
) -> None:
    """Run the test cases in PATH (files, or folders searched for test-case files: YAML whose
    top level has `cases`). Each case runs on a fresh session with the LLM its file gives
    (scripted rules, a cassette, or offline). See docs/testing.md.

    Exit 0: every case passed; 1: a case failed or a file could not run; 2: usage error.
    """
    from runner.testing import find_case_files, format_reports, run_files
    from runner.testing.report import summary

    files = find_case_files(paths)
    if not files:
        raise click.UsageError(
            f"no test-case files found in {', '.join(map(str, paths))} (a test-case file is a "
            "YAML file whose top level has `cases`)"
        )
    reports = run_files(
        files,
        allow_python=allow_python,
        select=select,
        index_progress=_indexing,
        llm_override=llm,
    )
    if select is not None and not any(report.cases for report in reports):
        raise click.UsageError(f"no case name contains {select!r}")
    text = format_reports(reports, fmt)
    if output is not None:
        output.write_text(text + "\n", encoding="utf-8")
        click.echo(f"{summary(reports)}; the {fmt} report is in {output}")
    else:
        click.echo(text)
    sys.exit(0 if all(report.passed for report in reports) else EXIT_FAILED)


def _indexing(corpus: str, stage: str, done: int, total: int) -> None:
    # a corpus indexed for the first time takes a few seconds: say so once, on stderr
    if stage == "read" and done == 0:
        click.echo(f"building the index of corpus {corpus!r} ({total} files)…", err=True)
