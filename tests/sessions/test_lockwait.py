"""One way to wait for a store's lock (runner.sessions.lockwait), for the command line
(`holding`) and the service (`runner.service.locks.KeyLocks`) alike."""

from __future__ import annotations

import asyncio

import pytest

from runner.service.errors import Busy
from runner.service.locks import KeyLocks
from runner.sessions import SessionBusyError, holding, lockwait


def test_the_pauses_double_up_to_the_last_and_end_with_the_wait():
    waited = list(lockwait.pauses(0.5))
    assert waited[:5] == [0.005, 0.01, 0.02, 0.04, 0.08]
    assert set(waited[5:-1]) == {lockwait.LAST_PAUSE_S}
    assert sum(waited) == pytest.approx(0.5)


def test_no_wait_is_no_pause():
    assert list(lockwait.pauses(0)) == []


class HeldElsewhere:
    """A store whose every lock another process holds: counts the tries."""

    tries = 0

    def try_lock(self, _key: str) -> None:
        self.tries += 1
        return None


@pytest.fixture
def slow_pauses(monkeypatch):
    """Pauses of 0.2 s then 0.1 s: a wait of 0.3 s tries three times, whoever waits."""
    monkeypatch.setattr(lockwait, "FIRST_PAUSE_S", 0.2)
    monkeypatch.setattr(lockwait, "LAST_PAUSE_S", 0.4)


def test_the_command_line_waits_with_the_shared_pauses(slow_pauses):
    store = HeldElsewhere()
    with pytest.raises(SessionBusyError, match=r"waited 0\.3 s"), holding(store, "s1", "s1", 0.3):  # type: ignore[arg-type]
        pass
    assert store.tries == 3


def test_the_service_waits_with_the_shared_pauses(slow_pauses):
    store = HeldElsewhere()

    async def io(call, *args):
        return call(*args)

    async def hold() -> None:
        async with KeyLocks(0.3, io).hold(store, "s1", "session 's1'"):  # type: ignore[arg-type]
            pass

    with pytest.raises(Busy, match=r"waited 0\.3 s"):
        asyncio.run(hold())
    assert store.tries == 3
