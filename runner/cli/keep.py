"""`runner keep PIPELINE --session ID`: a stored conversation as a `runner test` case.

The same case the playground's "Keep as test" writes (runner.playground.keep), from a session
of `runner run` or `runner chat`: printed for review, or with `--save` appended to the
pipeline's `tests/playground.yaml` (or `--output FILE`), where `runner test` runs it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from runner.cli.run import friendly_errors


@click.command("keep")
@click.argument("pipeline", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--session", "session_id", required=True, metavar="ID", help="The session to keep.")
@click.option("--name", help="The case's name (default: the first message).")
@click.option(
    "--cassette",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="The cassette the conversation was recorded to (`--record`): a real model's replies.",
)
@click.option(
    "--save", is_flag=True, help="Write the case beside the pipeline (tests/playground.yaml)."
)
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the case to this test file instead (created, or the case appended).",
)
@click.option(
    "--state",
    metavar="FILE|URL",
    help="The session store (default: .runner/state.sqlite beside the pipeline).",
)
@click.option("--debug", is_flag=True, help="Show tracebacks of errors.")
def command(
    pipeline: Path,
    session_id: str,
    name: str | None,
    cassette: Path | None,
    save: bool,
    output: Path | None,
    state: str | None,
    debug: bool,
) -> None:
    """Keep a stored conversation as a test case: its turns, and what each round did (outcome,
    the tools that ran, skipped subtasks, sources, the question, LLM calls by purpose).

    Prints the case; --save or --output writes it. Exit 0: kept; 1: it cannot be kept (the
    message says why).
    """
    from runner.config import load_pipeline
    from runner.playground import keep
    from runner.playground.health import schema_link
    from runner.sessions import open_store

    with friendly_errors(debug):
        loaded = load_pipeline(pipeline)
        store = open_store(state, loaded)
        try:
            store.load(session_id)  # a missing session is told with the store's message
            rounds = [
                keep.KeptRound(record.message, record.result, record.trace)
                for record in store.rounds(session_id)
            ]
        finally:
            store.close()
        try:
            kept = keep.keep(
                rounds,
                pipeline_path=pipeline,
                provider=keep.provider_of(rounds),
                name=name,
                test_file=output,
                cassette=cassette,
            )
            if not (save or output):
                click.echo(kept.text, nl=False)
                click.echo(f"# --save writes it to {kept.path}", err=True)
                return
            path, saved_as = keep.save(kept, schema_path=schema_link(kept.path))
        except keep.KeepError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(1)
        for note in kept.notes:
            click.echo(note, err=True)
        click.echo(f"kept {saved_as!r} in {path}; run it with: runner test {path}")
