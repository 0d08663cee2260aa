"""The optional on-disk response cache (SQLite), off by default.

The key is a hash of everything that shapes a reply: provider, model, prompt, temperature,
max_tokens and the reply schema. Only replies that were usable (valid, when a schema was asked
for) are stored, so a cache never replays a broken answer.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runner.config.model import ModelSettings

_SCHEMA = """
CREATE TABLE IF NOT EXISTS replies (
    key TEXT PRIMARY KEY,
    text TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL
)
"""


@dataclass(frozen=True)
class CachedReply:
    """A reply kept in the response cache, with the usage it had."""

    text: str
    prompt_tokens: int
    completion_tokens: int


def cache_key(
    provider: str, settings: ModelSettings, prompt: str, schema: Mapping[str, Any] | None
) -> str:
    material = json.dumps(
        [provider, settings.model, prompt, settings.temperature, settings.max_tokens, schema],
        sort_keys=True,
        ensure_ascii=False,
        default=str,
    )
    return hashlib.sha256(material.encode("utf-8")).hexdigest()


class ResponseCache:
    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, isolation_level=None)  # autocommit: one row per put
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(_SCHEMA)

    def get(self, key: str) -> CachedReply | None:
        row = self._db.execute(
            "SELECT text, prompt_tokens, completion_tokens FROM replies WHERE key = ?", (key,)
        ).fetchone()
        return CachedReply(*row) if row else None

    def put(self, key: str, reply: CachedReply) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO replies VALUES (?, ?, ?, ?)",
            (key, reply.text, reply.prompt_tokens, reply.completion_tokens),
        )

    def close(self) -> None:
        self._db.close()
