"""What building a tool may use: `ToolServices`, handed to every kind's `build(config, services)`.
Its own module because the kinds (base.py and each kind's module) and the registry that builds
them (runner.tools) both need it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from runner.config.model import Pipeline


@dataclass
class ToolServices:
    """What building a tool may use. `corpus(name)` returns the loaded index of a corpus
    (runner.retrieval), built on first use; `allow_python` gates `python` tools."""

    pipeline: Pipeline
    allow_python: bool = False
    corpus: Callable[[str], Any] | None = None
    state_dir: Path | None = None
    extras: dict[str, Any] = field(default_factory=dict)
