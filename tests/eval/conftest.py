"""`runner eval` tests: the hr example pipeline copied to a temporary folder (its index and runs
are written there), with its own question set, and click's CliRunner on runner's commands."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from runner.cli import main
from tests.examples_kit import copy_example

ROOT = Path(__file__).resolve().parents[2]
HR = ROOT / "pipelines" / "hr"


def copy_hr(folder: Path) -> Path:
    copy_example("hr", folder)
    return folder / "hr.yaml"


@pytest.fixture(scope="module")
def hr_module(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The hr pipeline, copied once per module (its index built once): for runs that only read."""
    return copy_hr(tmp_path_factory.mktemp("hr") / "hr")


@pytest.fixture
def hr(tmp_path: Path) -> Path:
    """The hr pipeline in a folder of this test's own (for tests that change it)."""
    return copy_hr(tmp_path / "hr")


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch) -> Callable[..., Result]:
    monkeypatch.delenv("RUNNER_LLM", raising=False)
    runner = CliRunner()

    def invoke(*args: Any) -> Result:
        return runner.invoke(main, [str(arg) for arg in args])

    return invoke


def records(folder: Path) -> list[dict[str, Any]]:
    lines = (folder / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path
