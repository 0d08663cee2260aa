"""Python's garbage collector while rounds run: full collections deferred, young ones as usual.

What a round makes outlives it: the task tree, the context buffer and the trace (the session
keeps them, the result carries them). The collector's young collections find almost nothing of
it to free and promote it all, and each full collection — by default after ten collections of
the middle generation, about every 70,000 surviving objects — walks everything the round has
built so far: the cost per task node of a large tree grows with its size (bench/README.md,
"Engine overhead"). While any round runs, full collections are `FULL_DEFERRAL` times rarer.
Young and middle collections go on as before, so short-lived garbage (a tool's reference
cycles) is freed as soon as it was; the thresholds are put back when the last round in flight
ends, and the next full collection walks the round's objects once. A service with rounds always
in flight makes full collections that much rarer: cyclic garbage old enough to reach the oldest
generation waits longer to be freed (memory, not correctness).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

FULL_DEFERRAL = 10  # measured on 10,000-node rounds: more defers no further cost (bench/README)


class _Deferral:
    """The rounds in flight in the process (the collector is the process's), and the
    thresholds to put back when the last one ends."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.rounds = 0
        self.saved: tuple[int, int, int] | None = None
        self.deferred: tuple[int, int, int] | None = None

    def enter(self) -> None:
        with self.lock:
            if self.rounds == 0:
                young, middle, full = self.saved = gc.get_threshold()
                self.deferred = (young, middle, full * FULL_DEFERRAL)
                gc.set_threshold(*self.deferred)
            self.rounds += 1

    def leave(self) -> None:
        with self.lock:
            self.rounds -= 1
            if self.rounds == 0 and self.saved is not None:
                # thresholds someone else set meanwhile are theirs: left as they are
                if gc.get_threshold() == self.deferred:
                    gc.set_threshold(*self.saved)
                self.saved = self.deferred = None


_DEFERRAL = _Deferral()


@contextmanager
def full_collections_deferred() -> Iterator[None]:
    """Full collections `FULL_DEFERRAL` times rarer while the block (a round) runs; rounds may
    overlap, in tasks or threads."""
    _DEFERRAL.enter()
    try:
        yield
    finally:
        _DEFERRAL.leave()
