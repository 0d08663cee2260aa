"""The documentation's commands, run with click's CliRunner on runner's command group from a
temporary folder, as a reader would type them in a shell there."""

from __future__ import annotations

import re
import traceback
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from runner.cli import main

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Result]:
    """`cli("run", "cafe/cafe.yaml", "…")` runs `runner run cafe/cafe.yaml "…"` in tmp_path;
    the result's `output` is stdout and stderr as a terminal shows them."""
    # the commands must not pick up a provider or a permission from the developer's shell
    monkeypatch.delenv("RUNNER_LLM", raising=False)
    monkeypatch.delenv("RUNNER_ALLOW_PYTHON", raising=False)
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()

    def invoke(*args: str, input: str | None = None) -> Result:
        return runner.invoke(main, list(args), input=input)

    return invoke


def session_ids(output: str) -> list[str]:
    """The generated session ids an output prints (`session 3c1d9a0e52f7 · round 1`)."""
    return re.findall(r"\bsession ([0-9a-f]{12})\b", output)


def crash(result: Result) -> str:
    """The traceback of a command that crashed (rather than exited), else ""."""
    if result.exception is None or isinstance(result.exception, SystemExit):
        return ""
    return "".join(traceback.format_exception(result.exception))


def failure(command: str, result: Result) -> str:
    """What a failed command printed, for an assertion message."""
    return f"$ {command}\n(exit {result.exit_code})\n{result.output}{crash(result)}"
