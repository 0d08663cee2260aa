"""`runner schema`: print the pipeline JSON Schema."""

from __future__ import annotations

import click

from runner.resources import schema_path


@click.command("schema")
@click.option(
    "--kind",
    type=click.Choice(["pipeline", "testcase", "trace", "result", "questions"]),
    default="pipeline",
    show_default=True,
    help="Which of runner's schemas to print.",
)
def command(kind: str) -> None:
    """Print a JSON Schema of runner (the pipeline format by default), for editors and tools."""
    click.echo(schema_path(kind).read_text(encoding="utf-8"), nl=False)
