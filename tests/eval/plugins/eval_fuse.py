"""Python tools that break the Ray worker they run in, for the retry tests
(tests/eval/test_ray.py), each on its own pair of files: once, when it takes its `once` file (the
first process to delete it); or on every attempt, at a task whose text holds the words in its
`always` file. Without those files they do nothing.

- `Fuse` kills the process, as an out-of-memory kill would.
- `Snag` raises `GaveUp`, a BaseException as some libraries' own are (gevent's Timeout, say):
  it passes every `except Exception` of the round, so the batch raises and the worker lives on.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from runner.engine.results import ToolResult


class GaveUp(BaseException):
    pass


class Tripwire:
    def __init__(self, config: Any, settings: dict[str, Any]) -> None:
        self.once = Path(settings["once"])
        self.always = Path(settings["always"])

    def execute(self, text: str, env: Any) -> ToolResult:
        if self.always.is_file() and self.always.read_text(encoding="utf-8") in text:
            self.trip(text)
        try:
            self.once.unlink()  # only one process can take it
        except FileNotFoundError:
            return ToolResult.context("")
        self.trip(text)
        return ToolResult.context("")

    def trip(self, text: str) -> None:
        raise NotImplementedError


class Fuse(Tripwire):
    def trip(self, text: str) -> None:
        os._exit(9)


class Snag(Tripwire):
    def trip(self, text: str) -> None:
        raise GaveUp(f"the snag tool gave up at {text!r}")
