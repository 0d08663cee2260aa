"""The session store: SQLite, one row per session plus one row per finished round (C24).

- Every save is one transaction (`BEGIN IMMEDIATE` … `COMMIT`) in WAL mode, so a process that
  dies at any point leaves either the previous state or the new one, never a mix; the next call
  continues from the last stored state (an interrupted round is resumed by the orchestrator).
- Optimistic locking: a session row carries a version. `save(state, expected_version)` succeeds
  only when the stored version is still the one the writer loaded, so two writers of one session
  get a `SessionConflictError` instead of a lost update.
- The pipeline's content hash is stored with the session; loading it against a changed pipeline
  file says so.
- Each finished round keeps its result and its trace events, which `runner explain --session`
  reads.
"""

from __future__ import annotations

import json
import sqlite3
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from runner.engine.state import SessionState

if TYPE_CHECKING:
    from runner.config.model import Pipeline

STORE_FORMAT = 1
DEFAULT_FILE = "state.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    pipeline_path TEXT NOT NULL,
    pipeline_hash TEXT NOT NULL,
    version INTEGER NOT NULL,
    state TEXT NOT NULL,
    created REAL NOT NULL,
    updated REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS rounds (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    round INTEGER NOT NULL,
    message TEXT NOT NULL,
    outcome TEXT NOT NULL,
    result TEXT NOT NULL,
    trace TEXT NOT NULL,
    at REAL NOT NULL,
    PRIMARY KEY (session_id, round)
);
"""


class SessionError(Exception):
    """A session cannot be used; the message says why and what to do."""


class SessionNotFoundError(SessionError):
    pass


class SessionConflictError(SessionError):
    """Another writer saved the session after this one loaded it (optimistic locking)."""


@dataclass(frozen=True)
class RoundRecord:
    """A finished round as stored: the message, the outcome, the result object and the trace."""

    round: int
    message: str
    outcome: str
    result: Mapping[str, Any]
    trace: Sequence[Mapping[str, Any]]
    at: float = 0.0


@dataclass(frozen=True)
class SessionInfo:
    id: str
    pipeline_path: str
    version: int
    rounds: int
    status: str  # "waiting" (a question is pending) | "interrupted" | "idle"
    created: float
    updated: float


@dataclass
class OpenSession:
    """A session ready for a round: its state, the version it was loaded at, and warnings."""

    state: SessionState
    version: int
    created: bool  # a new session, not stored yet
    warnings: list[str] = field(default_factory=list)


class SessionStore:
    """Sessions in one SQLite file. Cheap to open; close it (or use `with`) when done."""

    def __init__(self, path: Path, *, timeout_s: float = 10.0) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, timeout=timeout_s, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.execute("PRAGMA foreign_keys=ON")
            self._db.executescript(_SCHEMA)
            self._check_format()
        except sqlite3.DatabaseError as exc:
            raise SessionError(
                f"{self.path}: cannot open the session store ({exc}); pass --state with another "
                "file, or delete this one to start over"
            ) from exc

    @classmethod
    def for_pipeline(cls, pipeline: Pipeline, path: Path | None = None) -> SessionStore:
        """The store at `path`, or the pipeline's default: `<state folder>/state.sqlite`."""
        return cls(path if path is not None else pipeline.state_folder / DEFAULT_FILE)

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> SessionStore:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    # --- sessions ------------------------------------------------------------------------

    def open(self, session_id: str | None, pipeline: Pipeline) -> OpenSession:
        """The session to run a round on: a new one (a fresh id when none is given, or the
        given id when it is not stored yet), or the stored one, checked against the pipeline."""
        if session_id is None:
            return OpenSession(SessionState.new(new_session_id(), pipeline), 0, created=True)
        row = self._row(session_id)
        if row is None:
            return OpenSession(SessionState.new(session_id, pipeline), 0, created=True)
        state, version = self._decode(session_id, row)
        warnings = self._check_pipeline(state, pipeline)
        return OpenSession(state, version, created=False, warnings=warnings)

    def load(self, session_id: str) -> tuple[SessionState, int]:
        """The stored state of a session and its version."""
        row = self._row(session_id)
        if row is None:
            raise SessionNotFoundError(self._not_found(session_id))
        return self._decode(session_id, row)

    def save(
        self, state: SessionState, expected_version: int, *, round_record: RoundRecord | None = None
    ) -> int:
        """Store `state` if the session is still at `expected_version` (0: not stored yet);
        returns the new version. With `round_record`, the round is stored in the same
        transaction."""
        now = time.time()
        payload = json.dumps(state.to_json(), ensure_ascii=False)
        with self._transaction() as db:
            if expected_version == 0:
                inserted = db.execute(
                    "INSERT OR IGNORE INTO sessions VALUES (?, ?, ?, 1, ?, ?, ?)",
                    (state.session_id, state.pipeline_path, state.pipeline_hash, payload, now, now),
                ).rowcount
                if not inserted:
                    raise self._conflict(db, state.session_id, expected_version)
            else:
                updated = db.execute(
                    "UPDATE sessions SET state = ?, pipeline_path = ?, pipeline_hash = ?, "
                    "version = version + 1, updated = ? WHERE id = ? AND version = ?",
                    (
                        payload,
                        state.pipeline_path,
                        state.pipeline_hash,
                        now,
                        state.session_id,
                        expected_version,
                    ),
                ).rowcount
                if not updated:
                    raise self._conflict(db, state.session_id, expected_version)
            if round_record is not None:
                self._insert_round(db, state.session_id, round_record, now)
        return expected_version + 1

    def sessions(self) -> list[SessionInfo]:
        """Every stored session, the most recently updated first."""
        rows = self._db.execute(
            "SELECT id, pipeline_path, version, state, created, updated FROM sessions "
            "ORDER BY updated DESC, id"
        ).fetchall()
        return [self._info(*row) for row in rows]

    def rounds(self, session_id: str) -> list[RoundRecord]:
        """The finished rounds of a session, in order, with their results and traces."""
        if self._row(session_id) is None:
            raise SessionNotFoundError(self._not_found(session_id))
        rows = self._db.execute(
            "SELECT round, message, outcome, result, trace, at FROM rounds "
            "WHERE session_id = ? ORDER BY round",
            (session_id,),
        ).fetchall()
        return [
            RoundRecord(number, message, outcome, json.loads(result), json.loads(trace), at)
            for number, message, outcome, result, trace, at in rows
        ]

    def delete(self, session_id: str) -> bool:
        with self._transaction() as db:
            return bool(db.execute("DELETE FROM sessions WHERE id = ?", (session_id,)).rowcount)

    # --- internals -----------------------------------------------------------------------

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        # IMMEDIATE takes the write lock at the start, so the version check and the write are
        # one step for every other writer
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield self._db
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def _check_format(self) -> None:
        row = self._db.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
        if row is None:
            self._db.execute(
                "INSERT OR IGNORE INTO meta VALUES ('format', ?)", (str(STORE_FORMAT),)
            )
        elif row[0] != str(STORE_FORMAT):
            raise SessionError(
                f"{self.path}: session store format {row[0]} is not {STORE_FORMAT} (written by "
                "another version of runner); pass --state with another file"
            )

    def _row(self, session_id: str) -> tuple[str, int] | None:
        return self._db.execute(
            "SELECT state, version FROM sessions WHERE id = ?", (session_id,)
        ).fetchone()

    def _decode(self, session_id: str, row: tuple[str, int]) -> tuple[SessionState, int]:
        payload, version = row
        try:
            return SessionState.from_json(json.loads(payload)), version
        except (ValueError, KeyError, TypeError) as exc:
            raise SessionError(
                f"{self.path}: session {session_id!r} cannot be read back ({exc}); start a new "
                "session (leave out --session)"
            ) from exc

    def _check_pipeline(self, state: SessionState, pipeline: Pipeline) -> list[str]:
        stored_path = Path(state.pipeline_path).resolve()
        if stored_path != pipeline.path.resolve():
            raise SessionError(
                f"session {state.session_id!r} belongs to pipeline {state.pipeline_path}, not "
                f"{pipeline.path}; run it with that pipeline, or start a new session"
            )
        if state.pipeline_hash == pipeline.content_hash:
            return []
        state.pipeline_hash = pipeline.content_hash  # say it once; later rounds use this file
        return [
            f"the pipeline file {pipeline.path} changed since session {state.session_id!r} "
            "was stored; continuing with the file as it is now"
        ]

    def _conflict(
        self, db: sqlite3.Connection, session_id: str, expected_version: int
    ) -> SessionConflictError:
        row = db.execute("SELECT version FROM sessions WHERE id = ?", (session_id,)).fetchone()
        found = "deleted" if row is None else f"now at version {row[0]}"
        return SessionConflictError(
            f"session {session_id!r} was changed by another writer since it was loaded "
            f"(loaded at version {expected_version}, {found}); nothing was saved: run the "
            "command again to continue from the newest state"
        )

    def _insert_round(
        self, db: sqlite3.Connection, session_id: str, record: RoundRecord, now: float
    ) -> None:
        db.execute(
            "INSERT OR REPLACE INTO rounds VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                session_id,
                record.round,
                record.message,
                record.outcome,
                json.dumps(dict(record.result), ensure_ascii=False, default=str),
                json.dumps(
                    [dict(event) for event in record.trace], ensure_ascii=False, default=str
                ),
                record.at or now,
            ),
        )

    def _info(
        self, session_id: str, path: str, version: int, payload: str, created: float, updated: float
    ) -> SessionInfo:
        data = json.loads(payload)
        pending = data.get("pending") or {}
        if data.get("active_message") is not None:
            status = "interrupted"
        elif pending and pending.get("answer") is None:
            status = "waiting"
        else:
            status = "idle"
        return SessionInfo(
            session_id, path, version, int(data.get("rounds", 0)), status, created, updated
        )

    def _not_found(self, session_id: str) -> str:
        return (
            f"no session {session_id!r} in {self.path}; list the stored sessions with "
            "`runner explain --sessions`, or pass --state to name another store"
        )


def new_session_id() -> str:
    """A short random id that is easy to type back (`--session 3f9c2a61b0d4`)."""
    return uuid.uuid4().hex[:12]


class SessionWriter:
    """Saves one session, tracking its version: the orchestrator's checkpoint callback."""

    def __init__(self, store: SessionStore, version: int) -> None:
        self.store = store
        self.version = version

    def __call__(self, state: SessionState) -> None:
        self.version = self.store.save(state, self.version)

    def finish(self, state: SessionState, record: RoundRecord) -> None:
        """The round's last save: its state and its record, in one transaction."""
        self.version = self.store.save(state, self.version, round_record=record)
