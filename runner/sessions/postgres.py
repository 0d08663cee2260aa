"""Sessions in PostgreSQL, shared by every `runner serve` worker (and the CLI) that names the
database: `--state postgresql://user@host/db` or RUNNER_STATE.

The same guarantees as the SQLite store, from the database's own means:
- every save is one transaction; a writer that dies leaves the previous state;
- optimistic locking on the session row's version (`UPDATE … WHERE version = %s`);
- a request id is UNIQUE across the rounds, so one request is never committed twice;
- session locks are advisory locks held on one connection per store: other processes and
  machines see them, and PostgreSQL drops them when that connection (its process) dies;
- the schema carries its version in `runner_schema` and upgrades itself, under an advisory
  lock, so that workers starting together upgrade it once.
Tables are prefixed `runner_`, so the store can share a database with other applications.
"""

from __future__ import annotations

import hashlib
import secrets
import threading
import time
from typing import TYPE_CHECKING, Any

from runner.sessions.base import (
    RoundRecord,
    SessionError,
    SessionInfo,
    SessionLock,
    Store,
    encode,
    state_payload,
)

if TYPE_CHECKING:
    import psycopg

    from runner.engine.state import SessionState

SCHEMA_VERSION = 1
_UPGRADE_LOCK = 0x72756E6E6572  # "runner": the advisory lock that serialises upgrades

# version n: the statements that turn version n - 1 into n
_MIGRATIONS: dict[int, tuple[str, ...]] = {
    1: (
        """CREATE TABLE runner_sessions (
            id text PRIMARY KEY,
            pipeline_path text NOT NULL,
            pipeline_hash text NOT NULL,
            version integer NOT NULL,
            state text NOT NULL,
            created double precision NOT NULL,
            updated double precision NOT NULL
        )""",
        "CREATE INDEX runner_sessions_updated ON runner_sessions (updated DESC)",
        """CREATE TABLE runner_rounds (
            session_id text NOT NULL REFERENCES runner_sessions(id) ON DELETE CASCADE,
            round integer NOT NULL,
            message text NOT NULL,
            outcome text NOT NULL,
            result text NOT NULL,
            trace text NOT NULL,
            at double precision NOT NULL,
            request_id text UNIQUE,
            PRIMARY KEY (session_id, round)
        )""",
    ),
}


_INSERT_SESSION = (
    "INSERT INTO runner_sessions VALUES (%(id)s, %(path)s, %(hash)s, 1, %(state)s, %(now)s, "
    "%(now)s) ON CONFLICT (id) DO NOTHING RETURNING id"
)
_UPDATE_SESSION = (
    "UPDATE runner_sessions SET state = %(state)s, pipeline_path = %(path)s, "
    "pipeline_hash = %(hash)s, version = version + 1, updated = %(now)s "
    "WHERE id = %(id)s AND version = %(expected)s RETURNING id"
)
# the session's save and its round's record in one statement: the record is written only when
# the save matched (its version), and a request id another round holds fails both
_WITH_ROUND = (
    "WITH saved AS ({save}) INSERT INTO runner_rounds SELECT id, %(round)s, %(message)s, "
    "%(outcome)s, %(result)s, %(trace)s, %(at)s, %(request_id)s FROM saved "
    "ON CONFLICT (session_id, round) DO UPDATE SET message = excluded.message, "
    "outcome = excluded.outcome, result = excluded.result, trace = excluded.trace, "
    "at = excluded.at, request_id = excluded.request_id"
)


class PostgresStore(Store):
    """Sessions in a PostgreSQL database, through a connection pool."""

    _rounds_table = "runner_rounds"
    _mark = "%s"

    def __init__(self, url: str, *, pool_size: int = 16, timeout_s: float = 10.0) -> None:
        try:
            import psycopg
            from psycopg_pool import ConnectionPool
        except ImportError as exc:
            raise SessionError(
                f"a PostgreSQL session store needs psycopg: pip install 'runner[postgres]' ({exc})"
            ) from exc
        self.url = url
        self.location = _without_password(url)
        self._psycopg = psycopg
        self._pool = ConnectionPool(
            url,
            min_size=1,
            max_size=pool_size,
            timeout=timeout_s,
            kwargs={"autocommit": True},
            open=False,
            name="runner-sessions",
        )
        self._lock_connection: psycopg.Connection[Any] | None = None
        self._lock_guard = threading.Lock()
        try:
            self._pool.open(wait=True, timeout=timeout_s)
            self._migrate()
        except Exception as exc:
            self._pool.close()
            raise self._translate("open the session store", exc) from exc

    def close(self) -> None:
        self._stop_save_threads()  # the saves handed to them first
        with self._lock_guard:
            if self._lock_connection is not None:
                self._lock_connection.close()
                self._lock_connection = None
        self._pool.close()

    def ping(self) -> None:
        try:
            with self._pool.connection() as conn:
                conn.execute("SELECT 1 FROM runner_schema LIMIT 1").fetchall()
        except Exception as exc:
            raise self._translate("reach the session store", exc) from exc

    def secret(self, name: str) -> str:
        try:
            with self._pool.connection() as conn, conn.transaction():
                conn.execute(
                    "CREATE TABLE IF NOT EXISTS runner_secrets "
                    "(name text PRIMARY KEY, value text NOT NULL)"
                )
                conn.execute(  # the first writer's secret wins
                    "INSERT INTO runner_secrets VALUES (%s, %s) ON CONFLICT (name) DO NOTHING",
                    (name, secrets.token_hex(32)),
                )
                row = conn.execute(
                    "SELECT value FROM runner_secrets WHERE name = %s", (name,)
                ).fetchone()
                assert row is not None  # inserted just before, in this transaction
                return str(row[0])
        except Exception as exc:
            raise self._translate("read the store's secret", exc) from exc

    # --- storage primitives ------------------------------------------------------------------

    def save(
        self, state: SessionState, expected_version: int, *, round_record: RoundRecord | None = None
    ) -> int:
        # One statement, so one round trip and one transaction (autocommit): a service calls
        # this on its event loop after every step, and each wait for the server is a wait for
        # every round on that worker.
        sql = _INSERT_SESSION if expected_version == 0 else _UPDATE_SESSION
        now = time.time()
        values: dict[str, Any] = {
            "id": state.session_id,
            "path": state.pipeline_path,
            "hash": state.pipeline_hash,
            "state": state_payload(state),
            "now": now,
            "expected": expected_version,
        }
        if round_record is not None:
            sql = _WITH_ROUND.format(save=sql)
            values.update(_round_values(round_record, now))
        errors = self._psycopg.errors
        try:
            with self._pool.connection() as conn:
                changed = conn.execute(sql, values).rowcount
                if changed != 1:
                    row = conn.execute(
                        "SELECT version FROM runner_sessions WHERE id = %s", (state.session_id,)
                    ).fetchone()
                    raise self._conflict_error(
                        state.session_id, expected_version, None if row is None else row[0]
                    )
        except errors.UniqueViolation as exc:
            assert round_record is not None and round_record.request_id is not None
            raise self._duplicate_error(round_record.request_id) from exc
        except SessionError:
            raise
        except Exception as exc:
            raise self._translate(f"save session {state.session_id!r}", exc) from exc
        return expected_version + 1

    def sessions(self) -> list[SessionInfo]:
        rows = self._read(
            "SELECT id, pipeline_path, version, state, created, updated FROM runner_sessions "
            "ORDER BY updated DESC, id"
        )
        return [self._info(*row) for row in rows]

    def _row(self, session_id: str) -> tuple[str, int] | None:
        rows = self._read("SELECT state, version FROM runner_sessions WHERE id = %s", (session_id,))
        return (rows[0][0], rows[0][1]) if rows else None

    def delete(self, session_id: str) -> bool:
        try:
            with self._pool.connection() as conn:
                deleted = conn.execute(
                    "DELETE FROM runner_sessions WHERE id = %s", (session_id,)
                ).rowcount
        except Exception as exc:
            raise self._translate(f"delete session {session_id!r}", exc) from exc
        return bool(deleted)

    def prune(self, older_than: float) -> int:
        try:
            with self._pool.connection() as conn:
                return int(
                    conn.execute(
                        "DELETE FROM runner_sessions WHERE updated < %s", (older_than,)
                    ).rowcount
                )
        except Exception as exc:
            raise self._translate("delete old sessions", exc) from exc

    def try_lock(self, key: str) -> SessionLock | None:
        number = _lock_number(key)
        with self._lock_guard:
            try:
                held = self._try_advisory_lock(number)
            except self._psycopg.OperationalError:
                # the lock connection broke (the server restarted): every lock it held is
                # gone with it, so take a new connection and try once more
                self._drop_lock_connection()
                try:
                    held = self._try_advisory_lock(number)
                except Exception as exc:
                    self._drop_lock_connection()
                    raise self._translate(f"lock {key!r}", exc) from exc
        return _AdvisoryLock(self, number) if held else None

    # --- internals -----------------------------------------------------------------------

    def _try_advisory_lock(self, number: int) -> bool:
        row = self._locks().execute("SELECT pg_try_advisory_lock(%s)", (number,)).fetchone()
        return bool(row and row[0])

    def _locks(self) -> psycopg.Connection[Any]:
        if self._lock_connection is None or self._lock_connection.closed:
            self._lock_connection = self._psycopg.connect(self.url, autocommit=True)
        return self._lock_connection

    def _drop_lock_connection(self) -> None:
        if self._lock_connection is not None:
            self._lock_connection.close()
        self._lock_connection = None

    def _unlock(self, number: int) -> None:
        with self._lock_guard:
            if self._lock_connection is None or self._lock_connection.closed:
                return  # its connection is gone, and the lock with it
            try:
                self._lock_connection.execute("SELECT pg_advisory_unlock(%s)", (number,))
            except self._psycopg.OperationalError:
                self._drop_lock_connection()

    def _read(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        try:
            with self._pool.connection() as conn:
                return conn.execute(sql, params).fetchall()
        except Exception as exc:
            raise self._translate("read the session store", exc) from exc

    def _migrate(self) -> None:
        with self._pool.connection() as conn, conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_UPGRADE_LOCK,))
            conn.execute("CREATE TABLE IF NOT EXISTS runner_schema (version integer NOT NULL)")
            row = conn.execute("SELECT max(version) FROM runner_schema").fetchone()
            found = (row[0] if row else None) or 0
            if found > SCHEMA_VERSION:
                raise SessionError(
                    f"{self.location}: the session tables are at schema version {found}, newer "
                    f"than this runner's ({SCHEMA_VERSION}); upgrade runner on this machine"
                )
            for version in range(found + 1, SCHEMA_VERSION + 1):
                for statement in _MIGRATIONS[version]:
                    conn.execute(statement)
                conn.execute("INSERT INTO runner_schema VALUES (%s)", (version,))

    def _translate(self, doing: str, exc: BaseException) -> SessionError:
        if isinstance(exc, SessionError):
            return exc
        return self._unavailable_error(doing, exc)

    def _unavailable_hint(self, cause: BaseException) -> str:
        errors = self._psycopg.errors
        if isinstance(cause, errors.DiskFull):
            return "Free space on the database server's disk"
        if isinstance(cause, errors.ReadOnlySqlTransaction):
            return "Point --state at the primary server (this one is read-only)"
        if isinstance(cause, errors.InsufficientPrivilege):
            return "Give the database user the right to create and write the runner_ tables"
        return "Check that the database server is up and reachable at that address"


class _AdvisoryLock(SessionLock):
    def __init__(self, store: PostgresStore, number: int) -> None:
        self._store: PostgresStore | None = store
        self._number = number

    def release(self) -> None:
        if self._store is not None:
            self._store._unlock(self._number)
            self._store = None


def _round_values(record: RoundRecord, now: float) -> dict[str, Any]:
    return {
        "round": record.round,
        "message": pg_text(record.message),
        "outcome": record.outcome,
        "result": encode(dict(record.result)),
        "trace": encode([dict(event) for event in record.trace]),
        "at": record.at or now,
        "request_id": record.request_id,
    }


def _lock_number(key: str) -> int:
    """A signed 64-bit advisory lock key from any string key."""
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big", signed=True)


def pg_text(text: str) -> str:
    """PostgreSQL text cannot hold NUL; the JSON columns keep it escaped, this one replaces it."""
    return text.replace("\x00", "\ufffd")


def _without_password(url: str) -> str:
    """The URL as it may be shown: `postgresql://user:***@host/db`, and a password in its
    query (`?sslpassword=…`) hidden too (runner.text.credentials)."""
    from urllib.parse import urlsplit, urlunsplit

    from runner.text.credentials import hide_credentials

    parts = urlsplit(url)
    if parts.password is None:
        return hide_credentials(url)
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return hide_credentials(urlunsplit(parts._replace(netloc=netloc)))
