"""A python tool that kills the process it runs in, as an out-of-memory kill would, for the Ray
retry tests (tests/eval/test_ray.py): once, when it takes its `fuse` file (the first process
to delete it); or on every attempt, at a task whose text holds the words in its `fatal` file.
Without those files it does nothing."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from runner.engine.results import ToolResult


class Fuse:
    def __init__(self, config: Any, settings: dict[str, Any]) -> None:
        self.fuse = Path(settings["fuse"])
        self.fatal = Path(settings["fatal"])

    def execute(self, text: str, env: Any) -> ToolResult:
        if self.fatal.is_file() and self.fatal.read_text(encoding="utf-8") in text:
            os._exit(9)
        try:
            self.fuse.unlink()  # only one process can take it
        except FileNotFoundError:
            return ToolResult.context("")
        os._exit(9)
