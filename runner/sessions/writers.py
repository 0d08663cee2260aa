"""How a service saves a round: once, at its end, unless the round runs long.

The command line saves every checkpoint and waits for it (`SessionWriter`), so that a step is
never run twice after a crash. A service serves many rounds in one event loop, and every save
is a hop to a thread and a write of the session's row: eight of them made a round's store
work cost more than the rest of the service. So `BackgroundWriter`:

- keeps a round's checkpoints in memory (a snapshot of the state at that step: the round goes
  on changing the state);
- saves the round's state and its record in one transaction when the round ends (`finish`):
  the one write of a round that ends within `CHECKPOINT_DELAY_S`, which is nearly every round;
- saves the newest checkpoint of a round still running `CHECKPOINT_DELAY_S` after it, in the
  background while the round goes on (and again for later ones, never two saves at once): a
  worker killed mid-round leaves its round stored as of a step at most that old, and the
  round is resumed from there on any worker (C24: no finished step is lost, at most the last
  second of them is run again);
- saves the newest checkpoint when the round is cut off by an error (`close` without
  `finish`), so that the next request resumes it.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from runner.engine.state import SessionState
    from runner.sessions.base import RoundRecord, Store

CHECKPOINT_DELAY_S = 1.0


class _Snapshot:
    """What a save reads of a state, taken when the checkpoint is made."""

    __slots__ = ("_data", "pipeline_hash", "pipeline_path", "session_id")

    def __init__(self, state: SessionState) -> None:
        self.session_id = state.session_id
        self.pipeline_path = state.pipeline_path
        self.pipeline_hash = state.pipeline_hash
        self._data = state.to_json()

    def to_json(self) -> dict[str, Any]:
        return self._data


class BackgroundWriter:
    """A service's saves of one round (see the module): the orchestrator's checkpoint callback,
    made on the event loop the round runs on. `saves` counts the writes it made."""

    def __init__(self, store: Store, version: int) -> None:
        self.store = store
        self.version = version  # the version the next save expects
        self.saves = 0
        self._loop = asyncio.get_running_loop()
        self._thread = threading.get_ident()
        self._newest: _Snapshot | None = None  # a checkpoint not saved yet
        self._timer: asyncio.TimerHandle | None = None
        self._in_flight: asyncio.Future[int] | None = None
        self._closing = False
        self._error: BaseException | None = None

    def __call__(self, state: SessionState) -> None:
        self._newest = _Snapshot(state)
        if threading.get_ident() == self._thread:
            self._arm()
        else:  # a checkpoint from a thread a tool started: the timer is the loop's
            self._loop.call_soon_threadsafe(self._arm)

    async def finish(
        self, state: SessionState, record: RoundRecord, then: Callable[[], None] | None = None
    ) -> None:
        """The round's one write: its state and its record, in one transaction (a checkpoint
        not saved yet is part of it; one being saved is waited for, versions go in order).
        `then` runs right after it on the same thread, whether it succeeded or not (the
        service lets go of the session's lock there, in the same hop)."""
        self._disarm()
        self._newest = None
        if self._in_flight is not None:
            await asyncio.wait([self._in_flight])
        await self._submit(_Snapshot(state), record, then)

    def close(self) -> None:
        """The round is over: a checkpoint it made since its last save (a round cut off by an
        error, before `finish`) is saved now, in the background."""
        self._disarm()
        self._closing = True
        if self._in_flight is None:
            self._flush()

    # --- internals -----------------------------------------------------------------------

    def _arm(self) -> None:
        if self._timer is None and self._in_flight is None and not self._closing:
            self._timer = self._loop.call_later(CHECKPOINT_DELAY_S, self._flush)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _flush(self) -> None:
        self._timer = None
        snapshot, self._newest = self._newest, None
        if snapshot is not None:
            self._in_flight = self._submit(snapshot, None)
            self._in_flight.add_done_callback(self._flushed)

    def _flushed(self, saved: asyncio.Future[int]) -> None:
        self._in_flight = None
        if not saved.cancelled():
            saved.exception()  # kept in self._error: the round's last save raises it
        if self._newest is not None:
            if self._closing:
                self._flush()
            else:
                self._arm()

    def _submit(
        self,
        snapshot: _Snapshot,
        record: RoundRecord | None,
        then: Callable[[], None] | None = None,
    ) -> asyncio.Future[int]:
        expected = self.version
        self.version += 1
        self.saves += 1
        threads = self.store.save_threads()
        done: Future[int] = threads.submit(self._save, snapshot, expected, record, then)
        return asyncio.wrap_future(done, loop=self._loop)

    def _save(
        self,
        snapshot: _Snapshot,
        expected: int,
        record: RoundRecord | None,
        then: Callable[[], None] | None,
    ) -> int:
        try:
            if self._error is not None:  # every later save would fail on its version too
                raise self._error
            return self.store.save(snapshot, expected, round_record=record)  # type: ignore[arg-type]  # a snapshot reads as a state
        except BaseException as exc:
            self._error = exc
            raise
        finally:
            if then is not None:
                then()
