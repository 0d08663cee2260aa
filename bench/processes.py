"""How the benches start runner in a process of its own, as a user's install runs it: from a
checkout whose bytecode is compiled (pip compiles a package's modules when it installs it; a
shell with PYTHONDONTWRITEBYTECODE set, as CI and this machine have, would otherwise compile
every module a change touched on each start, tens of milliseconds a run)."""

from __future__ import annotations

import compileall
import os
from pathlib import Path

_COMPILED: set[Path] = set()


def checkout_env(checkout: Path) -> dict[str, str]:
    """The environment of a process that runs `checkout`'s runner: it on PYTHONPATH, its
    modules' bytecode compiled (once per checkout and process) and kept."""
    if checkout not in _COMPILED:
        compileall.compile_dir(checkout / "runner", quiet=1)
        _COMPILED.add(checkout)
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env
