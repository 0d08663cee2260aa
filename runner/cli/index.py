"""`runner index PIPELINE`: build and store the indexes of a pipeline's corpora and of its lookup
tools' tables.

An up-to-date index is left alone (a corpus's content hash and page settings decide, see
runner/retrieval/index.py; a table's size, mtime and hash and the tool's key columns, see
runner/tables/store.py); `--force` rebuilds anyway. Exit 0 when everything is indexed, 1 on an
error (a broken pipeline, a missing corpus folder or table, a store that cannot be written), 2 on
a usage error.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

import click

EXIT_ERROR = 1

CORPUS_STAGES = {
    "read": "reading files",
    "index": "indexing",
    "embed": "embedding pages",
    "save": "saving",
}
TABLE_STAGES = {"read": "reading the table", "index": "indexing its keys", "save": "saving rows"}


@click.command("index")
@click.argument("pipeline", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--corpus",
    "names",
    multiple=True,
    metavar="NAME",
    help="Index only this corpus (repeatable); default: every corpus and lookup table.",
)
@click.option(
    "--table",
    "tables",
    multiple=True,
    metavar="TOOL",
    help="Index only this lookup tool's table (repeatable); default: every corpus and table.",
)
@click.option("--force", is_flag=True, help="Rebuild even the indexes that are up to date.")
@click.option(
    "--stats",
    is_flag=True,
    help="Then show how many pages sample questions match in each keyword search's corpus, and "
    "propose its max_brute_force_page_count (questions: --questions, else the messages of the "
    "pipeline's tests/*.yaml).",
)
@click.option(
    "--questions",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    metavar="FILE",
    help="Sample questions for --stats, one a line (implies --stats).",
)
def command(
    pipeline: Path,
    names: tuple[str, ...],
    tables: tuple[str, ...],
    force: bool,
    stats: bool,
    questions: Path | None,
) -> None:
    """Build and store the indexes of PIPELINE's corpora and lookup tables (in its state folder,
    `.runner/` beside the pipeline by default). Unchanged corpora and tables are not rebuilt."""
    from runner.config import PipelineError, load_pipeline
    from runner.config.model import LookupOptions

    try:
        model = load_pipeline(pipeline)
    except PipelineError as error:
        click.echo(str(error), err=True)
        sys.exit(EXIT_ERROR)
    unknown = [name for name in names if name not in model.corpora]
    if unknown:
        known = ", ".join(sorted(model.corpora)) or "none"
        raise click.UsageError(f"no corpus named {', '.join(unknown)} (corpora: {known})")
    lookups = {t.name: t.options for t in model.tools if isinstance(t.options, LookupOptions)}
    unknown = [name for name in tables if name not in lookups]
    if unknown:
        known = ", ".join(lookups) or "none"
        raise click.UsageError(f"no lookup tool named {', '.join(unknown)} (lookup tools: {known})")
    everything = not names and not tables
    chosen = list(model.corpora) if everything else list(names)
    chosen_tables = list(lookups) if everything else list(tables)
    if not chosen and not chosen_tables:
        click.echo(f"{pipeline}: the pipeline has no corpora or lookup tables: nothing to index")
        return
    with _progress() as progress:
        for name in chosen:
            _index_corpus(model, name, force, progress)
        for name in chosen_tables:
            _index_table(model, name, lookups[name], force, progress)
    if stats or questions is not None:
        _show_stats(model, questions)


def _show_stats(model: Any, questions_file: Path | None) -> None:
    from runner.retrieval import open_corpus
    from runner.retrieval.sizing import questions_from_file, questions_from_tests, sizings

    if questions_file is not None:
        questions, origin = questions_from_file(questions_file), str(questions_file)
    else:
        questions, origin = questions_from_tests(model), "the messages of tests/*.yaml"
    found = sizings(model, questions, lambda corpus: open_corpus(model, corpus))
    if not found:
        click.echo("no keyword search tool: max_brute_force_page_count has nothing to size")
        return
    click.echo(f"\nsample questions: {len(questions)}, from {origin}")
    for sizing in found:
        click.echo("\n" + "\n".join(sizing.lines()))


def _progress() -> Any:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    console = Console(stderr=True, highlight=False)
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
    return Progress(*columns, console=console, transient=True)


def _reporter(
    progress: Any, name: str, labels: dict[str, str]
) -> tuple[Any, Callable[[str, int, int], None]]:
    """A progress bar for one index, and the callback that moves it."""
    bar = progress.add_task(f"{name}: checking", total=None)

    def report(stage: str, done: int, total: int) -> None:
        progress.update(bar, description=f"{name}: {labels[stage]}", completed=done, total=total)

    return bar, report


def _fail(progress: Any, message: str) -> NoReturn:
    progress.stop()
    click.echo(f"error: {message}", err=True)
    sys.exit(EXIT_ERROR)


def _index_corpus(model: Any, name: str, force: bool, progress: Any) -> None:
    from runner.config.paths import PathRefused
    from runner.retrieval import CorpusError, open_corpus

    bar, report = _reporter(progress, name, CORPUS_STAGES)
    try:
        index = open_corpus(model, name, force=force, progress=report)
    except (CorpusError, PathRefused) as error:
        _fail(progress, str(error))
    progress.remove_task(bar)
    status = index.status
    what = f"rebuilt ({status.reason})" if status.rebuilt else "up to date"
    click.echo(
        f"{name}: {what}, {status.pages} pages, {_vectors(index)}, {status.seconds:.2f} s -> "
        f"{index.folder}"
    )


def _vectors(index: Any) -> str:
    """What the index holds besides BM25: whose vectors, and how many were embedded now."""
    vectors = index.vectors
    if vectors is None:
        return "no vectors (BM25 only: no embedding model and no vector or hybrid search)"
    embedded = index.status.embedded
    reused = len(vectors) - embedded
    done = f"{embedded} embedded now" + (f", {reused} kept" if reused else "")
    return f"{len(vectors)} vectors of {vectors.model} ({done})"


def _index_table(model: Any, name: str, options: Any, force: bool, progress: Any) -> None:
    import sqlite3

    from runner.documents.table_files import TableError
    from runner.tables.store import index_table, store_path

    bar, report = _reporter(progress, name, TABLE_STAGES)
    try:
        status = index_table(model, options, force=force, progress=report)
    except TableError as error:
        _fail(progress, f"{name}: {error}")
    except (OSError, sqlite3.Error) as error:
        reason = getattr(error, "strerror", None) or error
        where = store_path(model, options)
        _fail(progress, f"{name}: cannot write the index of its table at {where}: {reason}")
    progress.remove_task(bar)
    what = f"rebuilt ({status.reason})" if status.rebuilt else "up to date"
    click.echo(
        f"{name}: {what}, {status.rows:,} rows, {status.keys:,} keys, {status.seconds:.2f} s -> "
        f"{status.path}"
    )
