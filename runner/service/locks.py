"""One request at a time per session, across every worker sharing the store.

A request first takes this process's lock on the key (so requests of one worker queue without
touching the database), then the store's lock (a PostgreSQL advisory lock, or a byte-range lock
beside a SQLite file), which other processes see and which dies with its holder, trying it
again after the pauses every waiter uses (runner.sessions.lockwait). Both waits share one
bound: past it the request is refused as Busy (HTTP 409) rather than queued forever.

What a round reads under the lock (is its request committed? the session's state) is read in
the same call to the store's threads as the lock is taken (`hold(..., then=read)`), and the
store's lock is let go in the same call as the round's last save (`HeldLock`, handed to the
writer): one hop at each end of a round, not one per read, save and release. On this
service's machines a hop costs a thread's wake and the loop's (0.1–0.3 ms of CPU each when
they were idle: bench/README.md, Serving).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, TypeVar

from runner.service.errors import Busy
from runner.sessions.lockwait import pauses

if TYPE_CHECKING:
    from runner.sessions import SessionLock, Store

T = TypeVar("T")


class HeldLock:
    """The store's lock on a key, let go once: by the round's last save, on the store's thread
    it saved on (`release` as the writer's `then`), or by `KeyLocks.hold` when the round ended
    any other way (a stored result returned, an error). Either thread may call `release`."""

    def __init__(self, lock: SessionLock) -> None:
        self._lock: SessionLock | None = lock
        self._guard = threading.Lock()

    @property
    def held(self) -> bool:
        return self._lock is not None

    def release(self) -> None:
        with self._guard:
            lock, self._lock = self._lock, None
        if lock is not None:
            lock.release()


class KeyLocks:
    def __init__(self, wait_s: float, io: Callable[..., Awaitable[Any]]) -> None:
        self.wait_s = wait_s
        self._io = io  # runs a blocking store call off the event loop
        self._local: dict[str, asyncio.Lock] = {}
        self._waiters: dict[str, int] = {}

    @asynccontextmanager
    async def hold(
        self, store: Store, key: str, what: str, then: Callable[[], T] | None = None
    ) -> AsyncIterator[tuple[T | None, HeldLock]]:
        """Hold `key` (a session id, or `request:<id>`) for the block; `what` names it in the
        Busy message. `then`, a blocking read, runs once the store's lock is held, in the same
        hop to the store's threads; the block gets what it returned (None without it) and the
        store's lock, which it may let go itself (in the hop of its last save); whatever it
        did not let go is let go when it ends."""
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
                held, value = await self._io(_lock_then_read, store, key, then)
                for pause in pauses(deadline - loop.time()):
                    if held is not None:
                        break
                    await asyncio.sleep(pause)
                    held, value = await self._io(_lock_then_read, store, key, then)
                if held is None:
                    raise self._busy(what)
                store_lock = HeldLock(held)
                try:
                    yield value, store_lock
                finally:
                    if store_lock.held:
                        await self._io(store_lock.release)
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


def _lock_then_read(
    store: Store, key: str, then: Callable[[], T] | None
) -> tuple[SessionLock | None, T | None]:
    """The store's lock on `key` (None: another process holds it) and, once held, `then()`;
    a read that fails lets the lock go again."""
    held = store.try_lock(key)
    if held is None or then is None:
        return held, None
    try:
        return held, then()
    except BaseException:
        held.release()
        raise
