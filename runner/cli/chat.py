"""`runner chat PIPELINE`: an interactive conversation on one session.

Each line is a round; a clarifying question is asked inline and the next line answers it (C24).
Ctrl-D (end of input) ends the chat; the session stays stored, so `--session ID` continues it
later, in `chat` or in `run`. Reads piped input too, one message a line; with `--request-id KEY`
line n is sent as request `KEY-n`, so the same input sent again skips the lines committed.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import click

from runner.cli.run import (
    conversation,
    friendly_errors,
    make_console,
    run_options,
    runtime_options,
    show_tracebacks,
    warn,
    warn_degraded,
)
from runner.cli.streamed import AnswerPrinter
from runner.render import show_result

if TYPE_CHECKING:
    from rich.console import Console

    from runner.app import Conversation
    from runner.engine.outcome import RoundResult


@click.command("chat")
@click.argument("pipeline", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@runtime_options
@click.option("--tree", is_flag=True, help="Show the task tree after every answer.")
def command(pipeline: Path, tree: bool, **values: Any) -> None:
    """Talk to PIPELINE: one message a line, clarifying questions answered inline.

    Ctrl-D ends the chat. The session is stored after every step; continue it later with
    --session ID (here or in `runner run`).
    """
    options = run_options(pipeline, values)
    stdin = sys.stdin
    console = make_console()
    with friendly_errors(options.debug), conversation(options) as talk:
        warn(talk.warnings)
        interactive = stdin.isatty()
        if interactive:
            console.print(
                f"runner chat · {talk.runtime.pipeline.domain} · session {talk.session_id} "
                "· Ctrl-D to end",
                style="dim",
            )
        talk = asyncio.run(
            chat(
                talk,
                stdin,
                console,
                tree=tree,
                interactive=interactive,
                request_prefix=options.request_id,
                printer=AnswerPrinter(console, options.stream),
                debug=options.debug,
            )
        )
        console.print(
            f"session {talk.session_id} saved · continue with: runner chat {pipeline} "
            f"--session {talk.session_id}",
            style="dim",
        )


async def chat(
    talk: Conversation,
    stdin: TextIO,
    console: Console,
    *,
    tree: bool,
    interactive: bool,
    request_prefix: str | None = None,
    printer: AnswerPrinter | None = None,
    debug: bool = False,
) -> Conversation:
    """One round a line until the input ends; returns the conversation it ended on. A single
    event loop serves the whole chat, so the LLM client's connections and limits live as long
    as the conversation."""
    from runner.app import replay_or_run, stored_result
    from runner.sessions import CommittedRound

    printer = printer or AnswerPrinter(console, stream=False)
    sent = 0
    while True:
        waiting = talk.state.waiting
        line = read_line("answer> " if waiting else "you> ", stdin, interactive)
        if line is None:  # Ctrl-D / end of the piped input
            if interactive:
                console.print()
            return talk
        message = line.strip()
        if not message:
            continue
        if not interactive:  # a transcript of piped input shows what was said
            console.print(f"{'answer' if waiting else 'you'}> {message}", style="bold")
        sent += 1
        request_id = None if request_prefix is None else f"{request_prefix}-{sent}"
        run = functools.partial(watched_round, talk, message, request_id, printer)
        done = await replay_or_run(talk.store, request_id, message, run)
        if isinstance(done, CommittedRound):  # sent before: its stored result, on its session
            if done.session_id != talk.session_id:
                talk = talk.runtime.conversation(talk.store, done.session_id)
            show_result(console, stored_result(done.record), tree=tree, stats=tree)
            console.print()
            continue
        result = done
        shown = printer.take()
        warn(result.warnings)
        warn_degraded(result)
        show_tracebacks(result, debug)
        show_result(console, result, tree=tree, stats=tree, shown=shown)
        console.print()
        sys.stdout.flush()


async def watched_round(
    talk: Conversation, message: str, request_id: str | None, printer: AnswerPrinter
) -> RoundResult:
    """The round `message` makes, its answer printed as it is written."""
    return await talk.say(message, request_id=request_id, watch=printer.watch())


def read_line(prompt: str, stdin: TextIO, interactive: bool) -> str | None:
    """The next message, None at the end of the input. On a terminal, `input()` with line
    editing and history (readline, where the platform has it)."""
    if not interactive:
        return stdin.readline() or None
    with contextlib.suppress(ImportError):  # imported for its side effect: line editing
        import readline  # noqa: F401
    try:
        return input(prompt)
    except EOFError:
        return None
