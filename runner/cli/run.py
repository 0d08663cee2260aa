"""`runner run PIPELINE MESSAGE`: one round of a conversation.

Exit 0: answered; 3: a clarifying question was asked (answer it with `--session ID`); 1: an
error, told in one readable paragraph (the traceback only with `--debug`).

The options, the error handling and the human output here are shared with `runner chat`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from runner.cli import options as shared
from runner.cli.streamed import STREAM_OPTION, AnswerPrinter, start_observability
from runner.render import describe_error, show_result

if TYPE_CHECKING:
    from rich.console import Console

    from runner.app import Conversation, Runtime
    from runner.engine.outcome import RoundResult
    from runner.sessions import Store

F = TypeVar("F", bound=Callable[..., Any])

EXIT_ERROR = 1


def _option(decorator: Callable[[F], F], default: Any = None) -> Any:
    """A field of `RunOptions` and its command-line option, stated together: the field's
    name is the option's parameter name."""
    return field(default=default, metadata={"option": decorator})


@dataclass(frozen=True)
class RunOptions:
    """What `run` and `chat` share: how to build the runtime and where the session lives. Each
    field is one option of both commands, in help order (`runtime_options`)."""

    pipeline: Path
    session: str | None = _option(
        click.option(
            "--session",
            metavar="ID",
            help="Continue this session (its pending question is answered by the message); "
            "without it a new session is started and its id printed.",
        )
    )
    llm: str | None = _option(
        click.option(
            "--llm",
            metavar="PROVIDER[:MODEL][@API_BASE]",
            help="Override the pipeline's LLM: offline, scripted, replay, openai_like, ollama, "
            "llama_index; @API_BASE sets the server, e.g. "
            "openai_like:smollm2@http://127.0.0.1:8080/v1.",
        )
    )
    # (RUF009: `_option` makes a `dataclasses.field`, which ruff does not see for a Path)
    llm_script: Path | None = _option(shared.llm_script)  # noqa: RUF009
    replay: Path | None = _option(shared.replay)  # noqa: RUF009
    record: Path | None = _option(  # noqa: RUF009
        click.option(
            "--record",
            metavar="CASSETTE",
            type=click.Path(dir_okay=False, path_type=Path),
            help="Write every LLM reply to this cassette (answer from it with --replay).",
        )
    )
    cache: bool | None = _option(shared.cache)
    allow_python: bool = _option(shared.allow_python, False)
    # a SQLite file or a postgresql:// URL (RUNNER_STATE when None)
    state: str | None = _option(
        click.option(
            "--state",
            metavar="FILE|URL",
            help="The session store: a SQLite file or a postgresql:// URL (also RUNNER_STATE; "
            "default: .runner/state.sqlite beside the pipeline).",
        )
    )
    request_id: str | None = _option(
        click.option(
            "--request-id",
            metavar="KEY",
            help="An idempotency key: a round already committed with this key is not run "
            "again, its stored result is printed (chat: line n is sent as KEY-n).",
        )
    )
    build: bool = _option(
        click.option(
            "--no-build",
            "build",
            flag_value=False,
            default=True,
            help="Fail instead of building a missing or stale corpus index.",
        ),
        True,
    )
    debug: bool = _option(
        click.option("--debug", is_flag=True, help="Show tracebacks of errors."), False
    )
    # print the answer as it is written (None: on a terminal)
    stream: bool | None = _option(STREAM_OPTION)


def runtime_options(function: F) -> F:
    """The options of `run` and `chat` (`RunOptions`' fields), in help order."""
    for option in reversed([f.metadata["option"] for f in fields(RunOptions) if f.metadata]):
        function = option(function)
    return function


def run_options(pipeline: Path, values: Mapping[str, Any]) -> RunOptions:
    """The options a command was given (click's values by parameter name)."""
    named = {f.name: values[f.name] for f in fields(RunOptions) if f.metadata}
    return RunOptions(pipeline=pipeline, **named)


@click.command("run")
@click.argument("pipeline", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("message")
@runtime_options
@click.option("--json", "as_json", is_flag=True, help="Print the result object as JSON.")
@click.option(
    "--strict",
    is_flag=True,
    help="Exit 1 when the round is degraded: a tool, coordinator or task failed and the round "
    "went on without it.",
)
@click.option(
    "--trace",
    "trace_file",
    metavar="FILE",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the round's trace as JSON Lines.",
)
@click.option(
    "--show-retrieval",
    is_flag=True,
    help="Also print the pages each retrieval returned (tool, query, rank, page, score).",
)
def command(
    pipeline: Path,
    message: str,
    as_json: bool,
    strict: bool,
    trace_file: Path | None,
    show_retrieval: bool,
    **values: Any,
) -> None:
    """Run one round of PIPELINE on MESSAGE.

    Prints the answer, its sources and the task tree (which tools ran on which task, and why).
    Exit 0: answered; 3: a clarifying question was asked (answer it with --session ID);
    1: error, or with --strict a degraded round.
    """
    options = run_options(pipeline, values)
    console = make_console()
    printer = AnswerPrinter(console, False if as_json else options.stream)
    with friendly_errors(options.debug), conversation(options) as talk:
        result = asyncio.run(one_round(talk, message, options, printer))
    if trace_file is not None and result.trace is not None:
        result.trace.write_jsonl(trace_file)
    warn(result.warnings)
    show_tracebacks(result, options.debug)
    from runner.retrieval.seen import format_retrievals, retrieval_events

    retrievals = retrieval_events(result.trace.events if result.trace is not None else [])
    if as_json:
        document = {**result.to_json(), "retrieval": retrievals}
        click.echo(json.dumps(document, ensure_ascii=False, indent=2))
    else:
        show_result(console, result, tree=True, shown=printer.take())
        if show_retrieval:
            console.print("retrieval:", highlight=False)
            shown = format_retrievals(retrievals, indent="  ") or "  (no retrieval ran)"
            console.print(shown, highlight=False, markup=False)
        show_session_hint(console, result, options)
        warn_degraded(result, strict)
    sys.exit(EXIT_ERROR if strict and result.degraded else result.exit_code)


# --- shared with `runner chat` ---------------------------------------------------------------


@contextmanager
def conversation(options: RunOptions) -> Iterator[Conversation]:
    """The runtime and the session store for one command, closed when it ends."""
    from runner.app import Runtime
    from runner.sessions import open_store

    start_observability()
    runtime = open_runtime(options, Runtime)
    try:
        with open_store(options.state, runtime.pipeline) as store, session_lock(store, options):
            yield runtime.conversation(store, options.session)
    finally:
        runtime.close()


def session_lock(store: Store, options: RunOptions) -> contextlib.AbstractContextManager[None]:
    """The session's lock (or the request id's, for a new session), so that a round on a
    session a `runner serve` worker is busy with waits for it instead of interleaving."""
    from runner.sessions import holding

    if options.session is not None:
        return holding(store, options.session, f"session {options.session!r}")
    if options.request_id is not None:
        key = f"request:{options.request_id}"
        return holding(store, key, f"request id {options.request_id!r}")
    return contextlib.nullcontext()


async def one_round(
    talk: Conversation, message: str, options: RunOptions, printer: AnswerPrinter
) -> RoundResult:
    """The round `message` makes on the command's session: the stored result of a round
    already committed with `--request-id` (said on stderr), else the round, run."""
    from runner.app import replay_or_run, stored_result
    from runner.sessions import CommittedRound

    async def run() -> RoundResult:
        warn(talk.warnings)
        return await talk.say(message, request_id=options.request_id, watch=printer.watch())

    done = await replay_or_run(
        talk.store, options.request_id, message, run, session_id=options.session
    )
    if not isinstance(done, CommittedRound):
        return done
    click.echo(
        f"note: request {options.request_id!r} was committed already (round "
        f"{done.record.round} of session {done.session_id}); its stored result follows, "
        "nothing was run",
        err=True,
    )
    return stored_result(done.record)


def open_runtime(options: RunOptions, runtime_class: type[Runtime]) -> Runtime:
    return runtime_class.open(
        options.pipeline,
        llm_override=options.llm,
        llm_script=options.llm_script,
        replay=options.replay,
        record=options.record,
        cache=options.cache,
        allow_python=options.allow_python,
        build_indexes=options.build,
        index_progress=_index_progress,
    )


def _index_progress(corpus: str, stage: str, done: int, total: int) -> None:
    # building an index on first use can take a while: say so once, on stderr
    if stage == "read" and done == 0:
        files = f"{total} file{'' if total == 1 else 's'}"
        click.echo(f"building the index of corpus {corpus!r} ({files})…", err=True)


@contextmanager
def friendly_errors(debug: bool) -> Iterator[None]:
    """Errors as one readable paragraph on stderr and exit 1; tracebacks only with --debug."""
    try:
        yield
    except (click.exceptions.Exit, click.ClickException, SystemExit):
        raise
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        sys.exit(130)
    except Exception as exc:
        if debug:
            raise
        click.echo(f"error: {describe_error(exc)}", err=True)
        sys.exit(EXIT_ERROR)


def show_tracebacks(result: RoundResult, debug: bool) -> None:
    """With --debug, every traceback the round's trace recorded, on stderr (the answer or the
    JSON on stdout stays as it is); without it, a round an unexpected exception ended says
    where its traceback is."""
    from runner.render import is_expected, tracebacks

    if debug:
        for what, text in tracebacks(result.trace.events if result.trace is not None else []):
            click.echo(f"traceback of {what}\n{text.rstrip()}", err=True)
    elif result.exception is not None and not is_expected(result.exception):
        click.echo("note: the trace records the error's traceback; --debug prints it", err=True)


def warn(warnings: list[str]) -> None:
    for message in warnings:
        click.echo(f"warning: {message}", err=True)


def warn_degraded(result: RoundResult, strict: bool | None = None) -> None:
    """A degraded round never looks like a clean one: one line on stderr under its warnings;
    `strict` (run's `--strict`; None for chat, which has none) adds what it does to the exit."""
    if not result.degraded:
        return
    verdicts = {None: "", True: "; so it exits 1 (--strict)", False: "; --strict makes this exit 1"}
    click.echo(
        f"warning: degraded round: {result.failures()} and the round went on without what "
        f"failed, so its {result.outcome} may be incomplete{verdicts[strict]}",
        err=True,
    )


def make_console() -> Console:
    """Rich output on stdout; when it is not a terminal (a pipe, a file, a test), a fixed
    width, so that tables and trees are not cut to a guessed one."""
    from rich.console import Console

    width = None if sys.stdout.isatty() else 120
    return Console(highlight=False, width=width)


def show_session_hint(console: Console, result: RoundResult, options: RunOptions) -> None:
    from rich.text import Text

    line = f"session {result.session} · round {result.round}"
    if result.outcome == "clarification":
        line += (
            f' · answer with: runner run {options.pipeline} "<your answer>" '
            f"--session {result.session}"
        )
    console.print(Text(line, style="dim"))
