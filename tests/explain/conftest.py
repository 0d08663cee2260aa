"""`runner explain` tests: small pipelines written for a test, the `lab` fixture pipeline (every
LLM call scripted) and the example pipelines, each copied to a temporary folder so that indexes
and sessions are written there."""

from __future__ import annotations

import asyncio
import shutil
import textwrap
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from runner.config import load_pipeline
from runner.config.model import Pipeline

if TYPE_CHECKING:
    from runner.engine.outcome import RoundResult

ROOT = Path(__file__).resolve().parents[2]
PIPELINES = ROOT / "pipelines"
FIXTURES = Path(__file__).parent / "fixtures"

Write = Callable[..., Pipeline]


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    # no provider or permission from the developer's shell
    monkeypatch.delenv("RUNNER_LLM", raising=False)
    monkeypatch.delenv("RUNNER_ALLOW_PYTHON", raising=False)


@pytest.fixture
def write(tmp_path: Path) -> Write:
    """Write a pipeline file (dedented YAML) and the files it names; return it loaded."""

    def write_pipeline(text: str, files: dict[str, str] | None = None) -> Pipeline:
        for name, content in (files or {}).items():
            path = tmp_path / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(content), encoding="utf-8")
        path = tmp_path / "pipeline.yaml"
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        return load_pipeline(path)

    return write_pipeline


@pytest.fixture
def lab(tmp_path: Path) -> Path:
    folder = tmp_path / "lab"
    shutil.copytree(FIXTURES / "lab", folder)
    return folder / "lab.yaml"


@pytest.fixture(scope="module")
def examples(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example pipelines, without their built indexes."""
    folder = tmp_path_factory.mktemp("pipelines")
    for name in ("support", "hr"):
        shutil.copytree(PIPELINES / name, folder / name, ignore=shutil.ignore_patterns(".runner"))
    return folder


def example(name: str) -> Pipeline:
    """An example pipeline as it is in the repository (for what reads the file only)."""
    return load_pipeline(PIPELINES / name / f"{name}.yaml")


def say(pipeline: Path, *messages: str) -> list[RoundResult]:
    """Rounds of one new session, with the pipeline's own LLM settings."""
    from runner.app import Runtime
    from runner.sessions import SessionStore

    with (
        Runtime.open(pipeline) as runtime,
        SessionStore(pipeline.parent / "sessions.sqlite") as store,
    ):
        conversation = runtime.conversation(store)
        return [asyncio.run(conversation.say(message)) for message in messages]


def requests(result: RoundResult) -> Counter[str]:
    """The LLM requests a round made, by purpose (first attempts only: retries come on top of
    what explain counts)."""
    assert result.trace is not None
    return Counter(
        event["purpose"] for event in result.trace.of("llm.call") if event.get("attempt", 1) == 1
    )
