"""`runner sessions prune`: delete the sessions nobody has used for a while (docs/serve.md).

Every round is stored with its result and its trace (about 17 KB with a corpus): a service
keeps them until they are deleted, here or by `runner serve --session-ttl`.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import click

from runner.cli.run import friendly_errors

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


class Duration(click.ParamType):
    """`90s`, `30m`, `12h`, `30d`, or seconds: a number of seconds."""

    name = "DURATION"

    def convert(
        self, value: Any, param: click.Parameter | None, ctx: click.Context | None
    ) -> float:
        if isinstance(value, (int, float)):
            return float(value)
        found = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*", str(value))
        if found is None or float(found[1]) <= 0:
            self.fail(f"{value!r} is not a duration: write 30d, 12h, 90m or 3600s", param, ctx)
        return float(found[1]) * _UNITS[found[2] or "s"]


@click.group("sessions")
def command() -> None:
    """Manage stored sessions."""


@command.command("prune")
@click.argument(
    "pipeline", required=False, type=click.Path(exists=True, dir_okay=False, path_type=Path)
)
@click.option(
    "--older-than",
    required=True,
    type=Duration(),
    help="Delete the sessions not used for this long: 30d, 12h, 90m, 3600s.",
)
@click.option(
    "--state",
    metavar="FILE|URL",
    help="The session store (default: RUNNER_STATE, else the pipeline's .runner/state.sqlite).",
)
@click.option("--debug", is_flag=True, help="Show tracebacks of errors.")
def prune(pipeline: Path | None, older_than: float, state: str | None, debug: bool) -> None:
    """Delete the sessions of a store (with their rounds) last used more than --older-than
    ago. Name the store with --state, or the PIPELINE whose default store it is."""
    import time

    from runner.sessions import open_store
    from runner.sessions.open import state_setting

    with friendly_errors(debug):
        loaded = None
        if pipeline is not None:
            from runner.config import load_pipeline

            loaded = load_pipeline(pipeline)
        elif state_setting(state) is None:
            raise click.UsageError("name the store: --state FILE|URL, or a PIPELINE file")
        with open_store(state, loaded) as store:
            deleted = store.prune(time.time() - older_than)
            click.echo(f"deleted {deleted} session(s) from {store.location}")
