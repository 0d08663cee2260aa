"""Sessions (C24): the whole state of a conversation, stored in SQLite after every step."""

from __future__ import annotations

from runner.sessions.store import (
    DEFAULT_FILE,
    OpenSession,
    RoundRecord,
    SessionConflictError,
    SessionError,
    SessionInfo,
    SessionNotFoundError,
    SessionStore,
    SessionWriter,
    new_session_id,
)

__all__ = [
    "DEFAULT_FILE",
    "OpenSession",
    "RoundRecord",
    "SessionConflictError",
    "SessionError",
    "SessionInfo",
    "SessionNotFoundError",
    "SessionStore",
    "SessionWriter",
    "new_session_id",
]
