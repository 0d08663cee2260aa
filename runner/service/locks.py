"""One request at a time per session, across every worker sharing the store.

A request first takes this process's lock on the key (so requests of one worker queue without
touching the database), then the store's lock (a PostgreSQL advisory lock, or a byte-range lock
beside a SQLite file), which other processes see and which dies with its holder. Both waits
share one bound: past it the request is refused as Busy (HTTP 409) rather than queued forever.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from runner.service.errors import Busy

if TYPE_CHECKING:
    from runner.sessions import Store

FIRST_POLL_S = 0.005
LAST_POLL_S = 0.1


class KeyLocks:
    def __init__(self, wait_s: float, io: Callable[..., Awaitable[Any]]) -> None:
        self.wait_s = wait_s
        self._io = io  # runs a blocking store call off the event loop
        self._local: dict[str, asyncio.Lock] = {}
        self._waiters: dict[str, int] = {}

    @asynccontextmanager
    async def hold(self, store: Store, key: str, what: str) -> AsyncIterator[None]:
        """Hold `key` (a session id, or `request:<id>`) for the block; `what` names it in the
        Busy message."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.wait_s
        local = self._local.setdefault(key, asyncio.Lock())
        self._waiters[key] = self._waiters.get(key, 0) + 1
        try:
            try:
                await asyncio.wait_for(local.acquire(), timeout=max(0.0, self.wait_s))
            except asyncio.TimeoutError:
                raise self._busy(what) from None
            try:
                held = await self._io(store.try_lock, key)
                poll = FIRST_POLL_S
                while held is None:
                    if loop.time() >= deadline:
                        raise self._busy(what)
                    await asyncio.sleep(poll)
                    poll = min(poll * 2, LAST_POLL_S)
                    held = await self._io(store.try_lock, key)
                try:
                    yield
                finally:
                    await self._io(held.release)
            finally:
                local.release()
        finally:
            self._waiters[key] -= 1
            if not self._waiters[key]:  # nobody else wants it: forget the lock
                del self._waiters[key]
                del self._local[key]

    def _busy(self, what: str) -> Busy:
        return Busy(
            f"{what} is busy with another request (waited {self.wait_s:g} s); send this one "
            "again when that one has finished, with the same request id to be safe"
        )
