"""The embedded session store: one SQLite file (the default beside each pipeline).

- Every save is one transaction (`BEGIN IMMEDIATE` … `COMMIT`) in WAL mode, so a process that
  dies at any point leaves either the previous state or the new one, never a mix; the next call
  continues from the last stored state (an interrupted round is resumed by the orchestrator).
- Durability: a round's last save (its record) is synced to disk before it returns
  (`synchronous=FULL`); the checkpoints within a round are not (`NORMAL`), which in WAL mode
  still survives any death of the process (kill -9) and only a power cut may undo them — the
  round then resumes from its previous durable step. The sync per checkpoint cost a service
  more than everything else a round does (the fsync holds the event loop).
- Optimistic locking: a session row carries a version, and a save succeeds only when the stored
  version is still the one its writer loaded (`SessionConflictError` otherwise).
- Session locks are byte-range locks on a `<file>.locks` file beside the store, one byte per
  key (open-file-description locks on Linux), so they hold across processes and die with them.
- The file carries its format number and is upgraded in place when an older runner wrote it.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import sqlite3
import struct
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from runner.sessions.base import (
    RoundRecord,
    SessionError,
    SessionInfo,
    SessionLock,
    SessionState,
    Store,
    encode,
    state_payload,
)

if TYPE_CHECKING:
    pass

STORE_FORMAT = 2
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

# format n -> the statements that turn format n into n + 1
_UPGRADES = {
    1: (
        "ALTER TABLE rounds ADD COLUMN request_id TEXT",
        "CREATE UNIQUE INDEX IF NOT EXISTS rounds_request_id ON rounds(request_id)",
    ),
}


class SQLiteStore(Store):
    """Sessions in one SQLite file."""

    _rounds_table = "rounds"
    _mark = "?"

    def __init__(self, path: Path, *, timeout_s: float = 10.0) -> None:
        self.path = Path(path)
        self.location = str(self.path)
        # one connection, used by the service's event loop and its save thread: one at a time
        self._guard = threading.RLock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(
                self.path, timeout=timeout_s, isolation_level=None, check_same_thread=False
            )
            self._db.execute("PRAGMA journal_mode=WAL")
            self._synchronous = ""
            self._sync("FULL")
            self._db.execute("PRAGMA foreign_keys=ON")
            self._migrate()
        except sqlite3.DatabaseError as exc:
            if _is_unavailable(exc):
                raise self._unavailable_error("open the session store", exc) from exc
            raise SessionError(
                f"{self.path}: cannot open the session store ({exc}); pass --state with another "
                "file, or delete this one to start over"
            ) from exc

    def close(self) -> None:
        self._stop_save_threads()  # the saves handed to them first
        with self._guard:
            self._db.close()

    def ping(self) -> None:
        try:
            self._read("SELECT 1 FROM meta LIMIT 1")
        except sqlite3.DatabaseError as exc:
            raise self._unavailable_error("read the session store", exc) from exc

    # --- storage primitives ------------------------------------------------------------------

    def save(
        self, state: SessionState, expected_version: int, *, round_record: RoundRecord | None = None
    ) -> int:
        now = time.time()
        payload = state_payload(state)
        try:
            with self._guard, self._transaction("NORMAL" if round_record is None else "FULL") as db:
                if expected_version == 0:
                    changed = db.execute(
                        "INSERT OR IGNORE INTO sessions VALUES (?, ?, ?, 1, ?, ?, ?)",
                        (
                            state.session_id,
                            state.pipeline_path,
                            state.pipeline_hash,
                            payload,
                            now,
                            now,
                        ),
                    ).rowcount
                else:
                    changed = db.execute(
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
                if not changed:
                    row = db.execute(
                        "SELECT version FROM sessions WHERE id = ?", (state.session_id,)
                    ).fetchone()
                    raise self._conflict_error(
                        state.session_id, expected_version, None if row is None else row[0]
                    )
                if round_record is not None:
                    self._insert_round(db, state.session_id, round_record, now)
        except sqlite3.IntegrityError as exc:
            assert round_record is not None and round_record.request_id is not None
            raise self._duplicate_error(round_record.request_id) from exc
        except sqlite3.OperationalError as exc:
            raise self._unavailable_error(f"save session {state.session_id!r}", exc) from exc
        return expected_version + 1

    def sessions(self) -> list[SessionInfo]:
        rows = self._read(
            "SELECT id, pipeline_path, version, state, created, updated FROM sessions "
            "ORDER BY updated DESC, id"
        )
        return [self._info(*row) for row in rows]

    def _row(self, session_id: str) -> tuple[str, int] | None:
        rows = self._read("SELECT state, version FROM sessions WHERE id = ?", (session_id,))
        return rows[0] if rows else None

    def delete(self, session_id: str) -> bool:
        with self._guard, self._transaction() as db:
            return bool(db.execute("DELETE FROM sessions WHERE id = ?", (session_id,)).rowcount)

    def prune(self, older_than: float) -> int:
        try:
            with self._guard, self._transaction() as db:
                return db.execute("DELETE FROM sessions WHERE updated < ?", (older_than,)).rowcount
        except sqlite3.OperationalError as exc:
            raise self._unavailable_error("delete old sessions", exc) from exc

    def secret(self, name: str) -> str:
        key = f"secret:{name}"
        with self._guard, self._transaction() as db:  # the first writer's secret wins
            db.execute("INSERT OR IGNORE INTO meta VALUES (?, ?)", (key, secrets.token_hex(32)))
            return str(db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()[0])

    def try_lock(self, key: str) -> SessionLock | None:
        return _RangeLock.try_acquire(self.path.with_name(self.path.name + ".locks"), key)

    # --- internals -----------------------------------------------------------------------

    def _sync(self, mode: str) -> None:
        if mode != self._synchronous:
            self._db.execute(f"PRAGMA synchronous={mode}")
            self._synchronous = mode

    def _read(self, sql: str, params: tuple[object, ...] = ()) -> list[tuple]:
        with self._guard:
            return self._db.execute(sql, params).fetchall()

    @contextmanager
    def _transaction(self, synchronous: str = "FULL") -> Iterator[sqlite3.Connection]:
        # IMMEDIATE takes the write lock at the start, so the version check and the write are
        # one step for every other writer
        self._sync(synchronous)
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield self._db
            self._db.execute("COMMIT")
        except BaseException:
            # SQLite has rolled back already after some errors (a full disk): only roll back
            # what is still open, so that the error told is the first one
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise

    def _migrate(self) -> None:
        with self._transaction() as db:
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    db.execute(statement)
            row = db.execute("SELECT value FROM meta WHERE key = 'format'").fetchone()
            found = 1 if row is None else int(row[0])  # a new file starts at format 1 too
            if found > STORE_FORMAT:
                raise SessionError(
                    f"{self.path}: session store format {found} is newer than this runner's "
                    f"({STORE_FORMAT}); upgrade runner, or pass --state with another file"
                )
            while found < STORE_FORMAT:
                for statement in _UPGRADES[found]:
                    db.execute(statement)
                found += 1
            db.execute("INSERT OR REPLACE INTO meta VALUES ('format', ?)", (str(STORE_FORMAT),))

    def _insert_round(
        self, db: sqlite3.Connection, session_id: str, record: RoundRecord, now: float
    ) -> None:
        db.execute(
            # a round stored again (a resumed round) replaces its record; a request id that
            # another round holds is a UNIQUE violation: that request is committed already
            "INSERT INTO rounds "
            "(session_id, round, message, outcome, result, trace, at, request_id) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (session_id, round) DO UPDATE SET "
            "message = excluded.message, outcome = excluded.outcome, result = excluded.result, "
            "trace = excluded.trace, at = excluded.at, request_id = excluded.request_id",
            (
                session_id,
                record.round,
                record.message,
                record.outcome,
                encode(dict(record.result)),
                encode([dict(event) for event in record.trace]),
                record.at or now,
                record.request_id,
            ),
        )

    def _unavailable_hint(self, cause: BaseException) -> str:
        text = str(cause).lower()
        if "full" in text:
            return f"Free space on the disk that holds {self.path}"
        if "readonly" in text or "read-only" in text:
            return f"Make {self.path} and its folder writable (or pass --state with another file)"
        if "locked" in text or "busy" in text:
            return "Another process keeps the store busy: wait for it"
        return f"Check that {self.path} is on a working, writable disk"


def _is_unavailable(exc: sqlite3.DatabaseError) -> bool:
    text = str(exc).lower()
    return isinstance(exc, sqlite3.OperationalError) and any(
        word in text for word in ("full", "readonly", "read-only", "unable to open", "locked")
    )


class _RangeLock(SessionLock):
    """One byte of a lock file, at an offset from the key's hash: an open-file-description
    lock (Linux) conflicts with every other open of the file, in this process too, and is
    released when the descriptor closes, however its process ends."""

    _SETLK = getattr(__import__("fcntl"), "F_OFD_SETLK", None)

    def __init__(self, fd: int) -> None:
        self._fd: int | None = fd

    @classmethod
    def try_acquire(cls, path: Path, key: str) -> _RangeLock | None:
        import fcntl

        offset = int.from_bytes(hashlib.sha256(key.encode()).digest()[:7], "big")
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            if cls._SETLK is not None:
                request = struct.pack("hhqqi4x", fcntl.F_WRLCK, os.SEEK_SET, offset, 1, 0)
                fcntl.fcntl(fd, cls._SETLK, request)
            else:  # a process-wide POSIX lock: the service's in-process lock covers the rest
                fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, offset, os.SEEK_SET)
        except OSError:
            os.close(fd)
            return None
        return cls(fd)

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
