"""Sessions (C24): the whole state of a conversation, stored after every step (a service:
after every round, and during a long one; runner.sessions.writers).

`open_store(url, pipeline)` picks the store: a SQLite file (the default, beside the pipeline)
or a PostgreSQL database (`postgresql://…`), both behind the one `Store` interface.
"""

from __future__ import annotations

from runner.sessions import lockwait
from runner.sessions.base import (
    CommittedRound,
    DuplicateRequestError,
    OpenSession,
    RoundRecord,
    SessionBusyError,
    SessionConflictError,
    SessionError,
    SessionInfo,
    SessionLock,
    SessionNotFoundError,
    SessionWriter,
    Store,
    StoreUnavailableError,
    holding,
    new_session_id,
)
from runner.sessions.open import STATE_ENV, is_postgres_url, open_store
from runner.sessions.sqlite import DEFAULT_FILE, SQLiteStore
from runner.sessions.writers import BackgroundWriter

# the embedded store's name from before PostgreSQL joined, kept for the code that names it
SessionStore = SQLiteStore

__all__ = [
    "DEFAULT_FILE",
    "STATE_ENV",
    "BackgroundWriter",
    "CommittedRound",
    "DuplicateRequestError",
    "OpenSession",
    "RoundRecord",
    "SQLiteStore",
    "SessionBusyError",
    "SessionConflictError",
    "SessionError",
    "SessionInfo",
    "SessionLock",
    "SessionNotFoundError",
    "SessionStore",
    "SessionWriter",
    "Store",
    "StoreUnavailableError",
    "holding",
    "is_postgres_url",
    "lockwait",
    "new_session_id",
    "open_store",
]
