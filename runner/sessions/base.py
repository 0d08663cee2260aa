"""What every session store offers (C24), whichever database holds the sessions.

A store keeps one row per session (its state, a version and the pipeline it belongs to; of
the state's history only the newest entry, the rest being the rounds') and one row per finished
round (message, outcome, result, trace, and the request id it was
sent with). The concrete stores — SQLite (`runner.sessions.sqlite`), the embedded default, and
PostgreSQL (`runner.sessions.postgres`), shared by several `runner serve` workers — implement
the few storage primitives below; the rules (what a new session is, when a pipeline changed,
what a stored state's status is, what the errors say) live here, once.
"""

from __future__ import annotations

import json
import time
import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from runner.engine.state import SessionState
from runner.sessions.lockwait import pauses

if TYPE_CHECKING:
    from runner.config.model import Pipeline

SAVE_THREADS = 8  # a service's saves in flight at once, per store


class SessionError(Exception):
    """A session cannot be used; the message says why and what to do."""


class SessionNotFoundError(SessionError):
    pass


class SessionConflictError(SessionError):
    """Another writer saved the session after this one loaded it (optimistic locking)."""


class StoreUnavailableError(SessionError):
    """The store cannot be written or reached (a full disk, a read-only file, a database that is
    down). Nothing already stored is lost: every save is one transaction."""


class SessionBusyError(SessionError):
    """Another process holds the session's lock (a round in flight) past the wait."""


class DuplicateRequestError(SessionError):
    """A round with this request id was already committed (by another writer)."""


@dataclass(frozen=True)
class RoundRecord:
    """A finished round as stored: the message, the outcome, the result object and the trace,
    and the request id (idempotency key) it was sent with, if any."""

    round: int
    message: str
    outcome: str
    result: Mapping[str, Any]
    trace: Sequence[Mapping[str, Any]]
    at: float = 0.0
    request_id: str | None = None


@dataclass(frozen=True)
class CommittedRound:
    """The round a request id was committed as, and its session."""

    session_id: str
    record: RoundRecord


@dataclass(frozen=True)
class SessionInfo:
    """A stored session as `runner sessions` lists it: its pipeline, version and rounds."""

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


class SessionLock(ABC):
    """A held lock on one key (a session id, or a request id); held across processes and
    machines sharing the store, and released when its holder dies."""

    @abstractmethod
    def release(self) -> None: ...


class Store(ABC):
    """Sessions in a database. Cheap to open; close it (or use `with`) when done.

    `location` names the store in every message (a file path, or a URL without its password).
    """

    location: str

    # --- the storage primitives of a concrete store ----------------------------------------

    @abstractmethod
    def secret(self, name: str) -> str:
        """A random secret of this store, made at its first use and the same for every process
        that opens the store after (the key the service names its clients with: a session id
        is never derived from a token alone)."""

    @abstractmethod
    def _row(self, session_id: str) -> tuple[Any, int] | None:
        """(stored state, as JSON text or an already decoded object; version), or None."""

    @abstractmethod
    def save(
        self, state: SessionState, expected_version: int, *, round_record: RoundRecord | None = None
    ) -> int:
        """Store `state` if the session is still at `expected_version` (0: not stored yet);
        returns the new version. With `round_record`, the round is stored in the same
        transaction. Raises SessionConflictError (another writer was first),
        DuplicateRequestError (the record's request id is committed already) or
        StoreUnavailableError."""

    @abstractmethod
    def sessions(self) -> list[SessionInfo]:
        """Every stored session, the most recently updated first."""

    # the concrete store's SQL dialect: the rounds table's name and the parameter mark
    _rounds_table: str
    _mark: str

    @abstractmethod
    def _read(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """The rows of a query (raises StoreUnavailableError when the store cannot answer)."""

    def _round_rows(self, session_id: str) -> list[RoundRecord]:
        rows = self._read(
            f"SELECT {_ROUND_COLUMNS} FROM {self._rounds_table} "
            f"WHERE session_id = {self._mark} ORDER BY round",
            (session_id,),
        )
        return [_round_record(*row) for row in rows]

    def rounds_between(self, session_id: str, first: int, last: int) -> list[RoundRecord]:
        """The finished rounds numbered `first` to `last` (both included), in order: what a
        page of a long session shows, read without reading the rest."""
        rows = self._read(
            f"SELECT {_ROUND_COLUMNS} FROM {self._rounds_table} WHERE session_id = {self._mark} "
            f"AND round >= {self._mark} AND round <= {self._mark} ORDER BY round",
            (session_id, first, last),
        )
        return [_round_record(*row) for row in rows]

    def committed(self, request_id: str) -> CommittedRound | None:
        """The round committed with this request id, if any."""
        rows = self._read(
            f"SELECT session_id, {_ROUND_COLUMNS} FROM {self._rounds_table} "
            f"WHERE request_id = {self._mark}",
            (request_id,),
        )
        return CommittedRound(rows[0][0], _round_record(*rows[0][1:])) if rows else None

    @abstractmethod
    def delete(self, session_id: str) -> bool: ...

    @abstractmethod
    def prune(self, older_than: float) -> int:
        """Delete the sessions (and their rounds) last updated before `older_than` (a Unix
        time); how many. `runner sessions prune` and `runner serve --session-ttl`."""

    @abstractmethod
    def try_lock(self, key: str) -> SessionLock | None:
        """The lock on `key` if no other process holds it, else None (never waits)."""

    @abstractmethod
    def ping(self) -> None:
        """Raise StoreUnavailableError unless the store answers."""

    @abstractmethod
    def close(self) -> None: ...

    def save_threads(self) -> ThreadPoolExecutor:
        """The threads a service's rounds are saved on (runner.sessions.writers), made at their
        first use and stopped by `close` once the saves handed to them are done."""
        threads: ThreadPoolExecutor | None = self.__dict__.get("_save_threads")
        if threads is None:
            threads = ThreadPoolExecutor(SAVE_THREADS, thread_name_prefix="runner-save")
            self.__dict__["_save_threads"] = threads
        return threads

    def _stop_save_threads(self) -> None:
        threads: ThreadPoolExecutor | None = self.__dict__.pop("_save_threads", None)
        if threads is not None:
            threads.shutdown(wait=True)

    def __enter__(self) -> Store:
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

    def start(self, session_id: str, pipeline: Pipeline) -> OpenSession:
        """A new session under an id made fresh for it (a service's random one): nothing to
        read, since no stored session can have it (and if one did, its first save would be a
        SessionConflictError rather than an overwrite)."""
        return OpenSession(SessionState.new(session_id, pipeline), 0, created=True)

    def find(self, session_id: str) -> tuple[SessionState, int] | None:
        """The stored state of a session and its version, or None when it is not stored."""
        row = self._row(session_id)
        return None if row is None else self._decode(session_id, row)

    def load(self, session_id: str) -> tuple[SessionState, int]:
        """The stored state of a session and its version."""
        row = self._row(session_id)
        if row is None:
            raise SessionNotFoundError(self._not_found(session_id))
        return self._decode(session_id, row)

    def rounds(self, session_id: str) -> list[RoundRecord]:
        """The finished rounds of a session, in order, with their results and traces."""
        if self._row(session_id) is None:
            raise SessionNotFoundError(self._not_found(session_id))
        return self._round_rows(session_id)

    # --- the rules shared by every store -------------------------------------------------

    def _decode(self, session_id: str, row: tuple[Any, int]) -> tuple[SessionState, int]:
        payload, version = row
        try:
            data = json.loads(payload) if isinstance(payload, str) else payload
            return SessionState.from_json(data), version
        except (ValueError, KeyError, TypeError) as exc:
            raise SessionError(
                f"{self.location}: session {session_id!r} cannot be read back ({exc}); start a "
                "new session (leave out --session)"
            ) from exc

    def _check_pipeline(self, state: SessionState, pipeline: Pipeline) -> list[str]:
        stored_path = Path(state.pipeline_path)
        # workers on several machines may keep one pipeline at different paths: the same
        # file name with the same content is the same pipeline
        same_content = (
            stored_path.name == pipeline.path.name and state.pipeline_hash == pipeline.content_hash
        )
        # the file's own path resolved (a stat per folder of it) only when nothing cheaper
        # told: a round of a session on its own pipeline is the common case
        if not (same_content or _same_file(stored_path, pipeline.path)):
            raise SessionError(
                f"session {state.session_id!r} belongs to pipeline {state.pipeline_path}, not "
                f"{pipeline.path}; run it with that pipeline, or start a new session"
            )
        state.pipeline_path = str(pipeline.path)
        if state.pipeline_hash == pipeline.content_hash:
            return []
        state.pipeline_hash = pipeline.content_hash  # say it once; later rounds use this file
        return [
            f"the pipeline file {pipeline.path} changed since session {state.session_id!r} "
            "was stored; continuing with the file as it is now"
        ]

    def _conflict_error(
        self, session_id: str, expected_version: int, found_version: int | None
    ) -> SessionConflictError:
        found = "deleted" if found_version is None else f"now at version {found_version}"
        return SessionConflictError(
            f"session {session_id!r} was changed by another writer since it was loaded "
            f"(loaded at version {expected_version}, {found}); nothing was saved: run the "
            "command again to continue from the newest state"
        )

    def _duplicate_error(self, request_id: str) -> DuplicateRequestError:
        return DuplicateRequestError(
            f"request id {request_id!r} was already committed by another writer; send it again "
            "to get the stored result"
        )

    def _unavailable_error(self, doing: str, cause: BaseException) -> StoreUnavailableError:
        return StoreUnavailableError(
            f"{self.location}: cannot {doing} ({cause}). Nothing stored was lost: every "
            f"session is as of its last saved step. {self._unavailable_hint(cause)}, then run "
            "the command again (with --session ID to continue a session)"
        )

    def _unavailable_hint(self, cause: BaseException) -> str:
        return "Make the store writable and reachable"

    def _info(
        self,
        session_id: str,
        path: str,
        version: int,
        payload: Any,
        created: float,
        updated: float,
    ) -> SessionInfo:
        data = json.loads(payload) if isinstance(payload, str) else payload
        return SessionInfo(
            session_id,
            path,
            version,
            int(data.get("rounds", 0)),
            session_status(data),
            created,
            updated,
        )

    def _not_found(self, session_id: str) -> str:
        return (
            f"no session {session_id!r} in {self.location}; list the stored sessions with "
            "`runner explain --sessions`, or pass --state to name another store"
        )


_ROUND_COLUMNS = "round, message, outcome, result, trace, at, request_id"


def _round_record(
    number: int,
    message: str,
    outcome: str,
    result: str,
    trace: str,
    at: float,
    request_id: str | None,
) -> RoundRecord:
    return RoundRecord(
        number, message, outcome, json.loads(result), json.loads(trace), at, request_id
    )


def session_status(data: Mapping[str, Any]) -> str:
    """ "interrupted" (a round in flight was cut off), "waiting" (a question is pending) or
    "idle", from a stored state's JSON."""
    pending = data.get("pending") or {}
    if data.get("active_message") is not None:
        return "interrupted"
    if pending and pending.get("answer") is None:
        return "waiting"
    return "idle"


@contextmanager
def holding(store: Store, key: str, what: str, wait_s: float = 30.0) -> Iterator[None]:
    """Hold the store's lock on `key` for the block, waiting up to `wait_s` for another
    process (a `runner serve` worker, another command) to let it go; SessionBusyError past it.
    For the command line; the service waits without blocking its event loop
    (runner.service.locks), with the same pauses (runner.sessions.lockwait)."""
    held = store.try_lock(key)
    for pause in pauses(wait_s):
        if held is not None:
            break
        time.sleep(pause)
        held = store.try_lock(key)
    if held is None:
        raise SessionBusyError(
            f"{what} is busy with another request (waited {wait_s:g} s); run the command "
            "again when that one has finished"
        )
    try:
        yield
    finally:
        held.release()


def new_session_id() -> str:
    """A short random id that is easy to type back (`--session 3f9c2a61b0d4`)."""
    return uuid.uuid4().hex[:12]


def _same_file(stored: Path, path: Path) -> bool:
    return stored == path or stored.resolve() == path.resolve()


def encode(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def state_payload(state: SessionState) -> str:
    """A state as its row stores it: its history cut to the newest entry. Every finished
    round is in the rounds table already, and the row is rewritten at every step of a round:
    so a step costs the same on the 600th round as on the first."""
    data = state.to_json()
    data["history"] = data.get("history", [])[-1:]
    return encode(data)


class SessionWriter:
    """Saves one session, tracking its version: the orchestrator's checkpoint callback."""

    def __init__(self, store: Store, version: int) -> None:
        self.store = store
        self.version = version

    def __call__(self, state: SessionState) -> None:
        self.version = self.store.save(state, self.version)

    def finish(
        self, state: SessionState, record: RoundRecord, then: Callable[[], None] | None = None
    ) -> None:
        """The round's last save: its state and its record, in one transaction; `then` is
        called after it, whether it succeeded or not."""
        try:
            self.version = self.store.save(state, self.version, round_record=record)
        finally:
            if then is not None:
                then()
