"""`runner run` and `runner chat` print the answer as the model writes it (`--stream`, the
default on a terminal), then the rest of the result as before."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from rich.console import Console

    from runner.app import RoundWatch


STREAM_OPTION = click.option(
    "--stream/--no-stream",
    default=None,
    help="Print the answer as the model writes it (default: when the output is a terminal; "
    "only models that stream do: openai_like, ollama, llama_index, scripted).",
)


class AnswerPrinter:
    """Writes the answer's pieces to the console as they come; `take` says what it wrote
    since it was last asked (what `show_result` need not print again)."""

    def __init__(self, console: Console, stream: bool | None) -> None:
        self.console = console
        self.enabled = sys.stdout.isatty() if stream is None else stream
        self._shown = ""

    def watch(self) -> RoundWatch | None:
        """What a round is given to print its answer as it is written (None: printed whole
        at its end)."""
        if not self.enabled:
            return None
        from runner.app import RoundWatch

        return RoundWatch(on_delta=self._write)

    def take(self) -> str:
        shown, self._shown = self._shown, ""
        return shown

    def _write(self, text: str) -> None:
        self._shown += text
        self.console.file.write(text)
        self.console.file.flush()


def start_observability() -> None:
    """OpenTelemetry, when the OTEL_* environment asks for it (docs/observability.md); a
    problem setting it up is a warning: the rounds run without it."""
    from runner.observability.environment import ObservabilityError, install_from_environment

    try:
        install_from_environment()
    except ObservabilityError as error:
        click.echo(f"warning: {error}", err=True)
