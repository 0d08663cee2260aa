"""Progress of a long run on stderr: done / total, questions per second and the time left.

On a terminal one line is redrawn in place; elsewhere (CI logs, a pipe) a line is written at
most every `LOG_EVERY_S` seconds and at the end, so a log shows progress without a flood.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

LOG_EVERY_S = 10.0
BAR_WIDTH = 24


def duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


class Progress:
    def __init__(
        self, total: int, *, done: int = 0, stream: TextIO | None = None, enabled: bool = True
    ) -> None:
        self.total = total
        self.done = done
        self.start_done = done  # a resumed run's rate counts this run's questions only
        self.stream = stream or sys.stderr
        self.enabled = enabled and total > 0
        self.live = self.stream.isatty()
        self.started = time.monotonic()
        self.last_log = self.started

    def advance(self, count: int = 1) -> None:
        self.done += count
        now = time.monotonic()
        if not self.enabled:
            return
        if self.live:
            self.stream.write("\r" + self.line(now))
            self.stream.flush()
        elif now - self.last_log >= LOG_EVERY_S:
            self.stream.write(self.line(now) + "\n")
            self.last_log = now

    def finish(self) -> None:
        if not self.enabled:
            return
        self.stream.write(("\r" if self.live else "") + self.line(time.monotonic()) + "\n")
        self.stream.flush()

    def line(self, now: float) -> str:
        elapsed = now - self.started
        ran = self.done - self.start_done
        rate = ran / elapsed if elapsed > 0 else 0.0
        left = (self.total - self.done) / rate if rate > 0 else None
        filled = int(BAR_WIDTH * self.done / self.total) if self.total else BAR_WIDTH
        bar = "#" * filled + "-" * (BAR_WIDTH - filled)
        eta = "ETA " + duration(left) if left is not None and self.done < self.total else ""
        return (
            f"eval [{bar}] {self.done}/{self.total} · {rate:.1f} q/s · "
            f"{duration(elapsed)} elapsed {eta}".rstrip()
        )
