"""`runner validate PATH...`: schema and semantic checks of pipeline files.

Exit 0 when every file is valid, 1 when one is not (or, with --strict, has a warning), 2 for a
usage error. Never imports or runs pipeline code, and never imports llama-index.
"""

from __future__ import annotations

import os
import sys

import click


def _use_color() -> bool:
    """Colour only on a terminal, and never when NO_COLOR is set (https://no-color.org)."""
    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


@click.command("validate")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "github", "junit"]),
    default="text",
    show_default=True,
    help="text for people, json for tools, github for workflow annotations, junit for CI.",
)
@click.option("--strict", is_flag=True, help="Warnings fail too.")
@click.option(
    "--online",
    is_flag=True,
    help="Also start the MCP servers and check the `mcp` tools against their tools (M codes).",
)
def command(paths: tuple[str, ...], fmt: str, strict: bool, online: bool) -> None:
    """Check pipeline files against the schema and the semantic rules.

    PATH is a pipeline file or a folder; folders are searched for pipeline files (YAML files
    whose top level has `domain` and `tools`). Exit 0: valid; 1: invalid; 2: usage error.
    Nothing is started or reached but with --online.
    """
    from runner.config import check_files, find_pipeline_files
    from runner.config.formats import format_reports

    files = find_pipeline_files(paths)
    if not files:
        raise click.UsageError(
            f"no pipeline files found in {', '.join(paths)} (a pipeline file is a YAML file "
            "whose top level has `domain` and `tools`)"
        )
    reports = check_files(files)
    if online:
        from runner.mcp_client.online import with_online_checks

        reports = with_online_checks(reports)
    color = fmt == "text" and _use_color()
    click.echo(format_reports(reports, fmt, strict=strict, color=color), color=color)
    sys.exit(0 if all(report.passed(strict) for report in reports) else 1)
