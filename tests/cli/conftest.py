"""Command-line tests: the `shop` fixture pipeline copied to a temporary folder (so sessions
and indexes are written there), and click's CliRunner on runner's command group."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from runner.cli import main
from runner.trace import schema_problems, validate_events
from tests.llm.conftest import llm_server  # noqa: F401 (a real LLM server that fails on cue)

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    """The shop pipeline file, in a folder of its own."""
    folder = tmp_path / "shop"
    shutil.copytree(FIXTURES / "shop", folder)
    return folder / "shop.yaml"


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch) -> Callable[..., Result]:
    # the commands must not pick up a provider or a permission from the developer's shell
    monkeypatch.delenv("RUNNER_LLM", raising=False)
    monkeypatch.delenv("RUNNER_ALLOW_PYTHON", raising=False)
    runner = CliRunner()

    def invoke(*args: Any, input: str | None = None) -> Result:
        return runner.invoke(main, [str(arg) for arg in args], input=input)

    return invoke


def result_json(result: Result) -> dict[str, Any]:
    """The `--json` result object, checked against schemas/result.schema.json."""
    data = json.loads(result.stdout)
    assert schema_problems("result", data, "result") == []
    return data


def trace_events(path: Path) -> list[dict[str, Any]]:
    """A `--trace` file's events, each checked against schemas/trace.schema.json."""
    events = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert validate_events(events) == []
    return events
