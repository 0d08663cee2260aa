"""`runner explain`: a pipeline as a table, a tree and its worst-case LLM calls; or why a session
did what it did.

    runner explain PIPELINE [--format text|json|mermaid]
                                              the tools (kind, priority, activation, coordinator,
                                              consumer, output, forced by), the coordinators and
                                              the deep fallback as trees, and the worst-case LLM
                                              calls per question along each path
    runner explain --session ID [PIPELINE]    round by round: which coordinator ran or was
                                              skipped and why, how tools were activated, each
                                              conditional decision, what each tool left
    runner explain --sessions [PIPELINE]      the stored sessions

The session store is `--state PATH`, else the pipeline's (`.runner/state.sqlite` beside it), else
`.runner/state.sqlite` in the current folder. Never imports pipeline code or llama-index; the work
is in runner/explain/, this module parses, calls and prints.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from runner.cli.run import friendly_errors, make_console

if TYPE_CHECKING:
    from runner.config.model import Pipeline
    from runner.sessions import Store

FORMATS = ("text", "json", "mermaid")


@click.command("explain")
@click.argument(
    "pipeline", required=False, type=click.Path(exists=True, dir_okay=False, path_type=Path)
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(FORMATS),
    default="text",
    show_default=True,
    help="PIPELINE as tables and trees, as one JSON object, or as a Mermaid flowchart.",
)
@click.option("--session", "session_id", metavar="ID", help="Explain this session's rounds.")
@click.option("--sessions", "list_sessions", is_flag=True, help="List the stored sessions.")
@click.option(
    "--state",
    metavar="FILE|URL",
    help="The session store: a SQLite file or a postgresql:// URL (also RUNNER_STATE; "
    "default: the pipeline's, or ./.runner/state.sqlite).",
)
@click.option("--llm-calls", is_flag=True, help="With --session: list every LLM call too.")
@click.option("--debug", is_flag=True, help="Show tracebacks of errors.")
def command(
    pipeline: Path | None,
    output_format: str,
    session_id: str | None,
    list_sessions: bool,
    state: str | None,
    llm_calls: bool,
    debug: bool,
) -> None:
    """Explain PIPELINE (its tools, coordinators, deep fallback and worst-case LLM calls per
    question), or a stored session (--session ID).

    With --session, says round by round why each coordinator ran or was skipped, how the tools
    of each task were chosen, each conditional decision and who made it, and what every tool
    left in the context buffer.
    """
    if pipeline is None and session_id is None and not list_sessions:
        raise click.UsageError("give a PIPELINE to explain, or --session ID, or --sessions")
    with friendly_errors(debug):
        loaded = _load(pipeline) if pipeline is not None else None
        if session_id is None and not list_sessions:
            assert loaded is not None
            show_pipeline(loaded, output_format)
            return
        from runner.explain.session import explain_session, session_lines

        with open_store(loaded, state) as store:
            lines = session_lines(store) if list_sessions else []
            if session_id is not None:
                lines.extend(explain_session(store, session_id, llm_calls=llm_calls))
            for line in lines:
                click.echo(line)


def show_pipeline(pipeline: Pipeline, output_format: str) -> None:
    if output_format == "json":
        from runner.explain.render import explanation

        click.echo(json.dumps(explanation(pipeline), indent=2, ensure_ascii=False))
    elif output_format == "mermaid":
        from runner.explain.mermaid import flowchart

        click.echo(flowchart(pipeline), nl=False)
    else:
        from runner.explain.render import print_explanation

        print_explanation(make_console(), pipeline)


def _load(path: Path) -> Pipeline:
    from runner.config import load_pipeline

    return load_pipeline(path)


def open_store(pipeline: Pipeline | None, state: str | None) -> Store:
    from runner.sessions import DEFAULT_FILE, SessionStore, is_postgres_url
    from runner.sessions import open_store as open_named
    from runner.sessions.open import state_setting

    chosen = state_setting(state)
    if is_postgres_url(chosen):
        return open_named(chosen)
    if chosen is not None:
        return SessionStore(_existing(Path(chosen)))
    if pipeline is not None:
        return SessionStore(_existing(pipeline.state_folder / DEFAULT_FILE))
    return SessionStore(_existing(Path(".runner") / DEFAULT_FILE))


def _existing(path: Path) -> Path:
    if not path.is_file():
        raise click.UsageError(
            f"no session store at {path}; name it with --state PATH, or give the PIPELINE "
            "whose sessions to explain"
        )
    return path
