"""Waiting for a store's lock that another process holds: one timing for every waiter.

A store's lock (`Store.try_lock`) never waits: the command line (`holding`, blocking) and the
service (`runner.service.locks`, without blocking its event loop) both try it again after each
pause of `pauses(wait_s)` — short at first, since most rounds that hold a session end within
milliseconds, then longer, so that a long wait does not hammer the database — until the wait
is spent.
"""

from __future__ import annotations

from collections.abc import Iterator

FIRST_PAUSE_S = 0.005
LAST_PAUSE_S = 0.1


def pauses(wait_s: float) -> Iterator[float]:
    """The pauses between two tries of a lock, doubling from FIRST_PAUSE_S up to LAST_PAUSE_S,
    that add up to `wait_s` (the last one cut to end there); then no more."""
    left = wait_s
    pause = FIRST_PAUSE_S
    while left > 0:
        yield min(pause, left)
        left -= pause
        pause = min(pause * 2, LAST_PAUSE_S)
