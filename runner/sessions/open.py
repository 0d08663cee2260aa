"""Choosing a session store from `--state` / `RUNNER_STATE`: a PostgreSQL URL or a file."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from runner.config.model import Pipeline
    from runner.sessions.base import Store

STATE_ENV = "RUNNER_STATE"
POSTGRES_SCHEMES = ("postgresql://", "postgres://")


def is_postgres_url(state: str | os.PathLike[str] | None) -> bool:
    return isinstance(state, str) and state.startswith(POSTGRES_SCHEMES)


def state_setting(state: str | os.PathLike[str] | None) -> str | os.PathLike[str] | None:
    """`--state` when given, else RUNNER_STATE, else None (the pipeline's default file)."""
    if state is not None and str(state) != "":
        return state
    return os.environ.get(STATE_ENV) or None


def open_store(state: str | os.PathLike[str] | None, pipeline: Pipeline | None = None) -> Store:
    """The store `state` names (a `postgresql://` URL or a SQLite file path; RUNNER_STATE when
    None), or the pipeline's default file `<state folder>/state.sqlite`."""
    from runner.sessions.sqlite import DEFAULT_FILE, SQLiteStore

    chosen = state_setting(state)
    if is_postgres_url(chosen):
        from runner.sessions.postgres import PostgresStore

        return PostgresStore(str(chosen))
    if chosen is not None:
        return SQLiteStore(Path(chosen))
    if pipeline is None:
        return SQLiteStore(Path(".runner") / DEFAULT_FILE)
    return SQLiteStore(pipeline.state_folder / DEFAULT_FILE)
