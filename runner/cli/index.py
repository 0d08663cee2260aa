"""`runner index PIPELINE`: build and store the indexes of a pipeline's corpora.

An up-to-date index is left alone (the corpus's content hash and page settings decide, see
runner/retrieval/index.py); `--force` rebuilds anyway. Exit 0 when every corpus is indexed, 1 on
an error (a broken pipeline, a missing corpus folder), 2 on a usage error.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

EXIT_ERROR = 1


@click.command("index")
@click.argument("pipeline", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--corpus",
    "names",
    multiple=True,
    metavar="NAME",
    help="Index only this corpus (repeatable); default: every corpus of the pipeline.",
)
@click.option("--force", is_flag=True, help="Rebuild even the indexes that are up to date.")
def command(pipeline: Path, names: tuple[str, ...], force: bool) -> None:
    """Build and store the indexes of PIPELINE's corpora (in its state folder, `.runner/` beside
    the pipeline by default). Unchanged corpora are not rebuilt."""
    from runner.config import PipelineError, load_pipeline

    try:
        model = load_pipeline(pipeline)
    except PipelineError as error:
        click.echo(str(error), err=True)
        sys.exit(EXIT_ERROR)
    unknown = [name for name in names if name not in model.corpora]
    if unknown:
        known = ", ".join(sorted(model.corpora)) or "none"
        raise click.UsageError(f"no corpus named {', '.join(unknown)} (corpora: {known})")
    chosen = list(names) or list(model.corpora)
    if not chosen:
        click.echo(f"{pipeline}: the pipeline has no corpora: nothing to index")
        return
    _index_all(model, chosen, force)


def _index_all(model: object, names: list[str], force: bool) -> None:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from runner.config.paths import PathRefused
    from runner.retrieval import CorpusError, open_corpus

    console = Console(stderr=True, highlight=False)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, console=console, transient=True) as progress:
        for name in names:
            bar = progress.add_task(f"{name}: checking", total=None)

            def report(stage: str, done: int, total: int, bar: int = bar, name: str = name) -> None:
                label = {"read": "reading files", "index": "indexing", "save": "saving"}[stage]
                progress.update(bar, description=f"{name}: {label}", completed=done, total=total)

            try:
                index = open_corpus(model, name, force=force, progress=report)  # type: ignore[arg-type]
            except (CorpusError, PathRefused) as error:
                progress.stop()
                click.echo(f"error: {error}", err=True)
                sys.exit(EXIT_ERROR)
            progress.remove_task(bar)
            status = index.status
            what = f"rebuilt ({status.reason})" if status.rebuilt else "up to date"
            click.echo(
                f"{name}: {what}, {status.pages} pages, {status.seconds:.2f} s -> {index.folder}"
            )
