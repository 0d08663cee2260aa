"""The structured-output mode each server accepted, remembered across processes.

A server that refuses `response_format: json_schema` (llama.cpp's server: "Input should be
'text' or 'json_object'") refuses it on every fresh process; without a memory, each run spends
its first structured request on the refusal. The client steps down once (runner.llm.decoding)
and writes the mode that worked here, per provider, `api_base` and model, in the pipeline's
state folder (`.runner/llm-accepted-modes.json`); the next process starts in that mode.

The file is small JSON, written atomically (a temporary file renamed over it) under an
advisory lock, so that two processes stepping down at once both land. Anything unreadable in it
(a half-written file of an older runner, a hand edit) counts as nothing remembered: the worst
that does is one refused request again. Delete the file to try the higher mode again (after a
server upgrade, say).
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from runner.llm.decoding import MODES

FILE = "llm-accepted-modes.json"
# The file holds a line per server and model: far below this, unless it is not ours.
_MAX_BYTES = 1_000_000

try:  # advisory locks where the platform has them; elsewhere the atomic rename is enough
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]  # no module on this platform


def server_key(provider: str, api_base: str | None, model: str) -> str:
    """Who accepted a mode: the provider, where it is served and the model."""
    return f"{provider} {api_base or '(default api_base)'} {model}"


class AcceptedModes:
    """Remembered modes in one state folder's file."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def recall(self, key: str) -> str | None:
        """The mode the server accepted last time (None: nothing remembered)."""
        entry = self._read().get(key)
        mode = entry.get("mode") if isinstance(entry, dict) else None
        return mode if mode in MODES else None

    def remember(self, key: str, mode: str, refused: str) -> None:
        """Keep `mode` as the one this server accepts, after it refused `refused`. A state
        folder that cannot be written only costs the memory, never the run."""
        with contextlib.suppress(OSError), self._locked():
            entries = self._read()
            entries[key] = {"mode": mode, "refused": refused, "since": _now()}
            self._write(entries)

    def _read(self) -> dict[str, Any]:
        try:
            with self.path.open("rb") as handle:
                data = json.loads(handle.read(_MAX_BYTES + 1)[:_MAX_BYTES])
        except (OSError, ValueError):
            return {}
        servers = data.get("servers") if isinstance(data, dict) else None
        return dict(servers) if isinstance(servers, dict) else {}

    def _write(self, entries: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps({"version": 1, "servers": entries}, indent=2, sort_keys=True)
        descriptor, temporary = tempfile.mkstemp(
            dir=self.path.parent, prefix=f".{self.path.name}.", suffix=".tmp"
        )
        try:
            with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
                handle.write(text + "\n")
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temporary, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """Held while a process reads, merges and writes the file."""
        if fcntl is None:
            yield
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path.with_name(self.path.name + ".lock"), "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
