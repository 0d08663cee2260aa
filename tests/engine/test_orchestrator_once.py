"""The orchestrator is built once per runtime and holds nothing of any round: every round of
every session runs on the same one, and a round leaves it as it found it."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from runner.app import Runtime
from runner.engine import orchestrator as orchestrator_module
from runner.sessions import open_store

PIPELINE = Path(__file__).resolve().parents[2] / "pipelines" / "minimal.yaml"


def test_every_round_of_a_runtime_runs_on_one_orchestrator(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[object] = []
    original = orchestrator_module.Orchestrator.__init__

    def counted(self: Any, *args: Any, **kwargs: Any) -> None:
        built.append(self)
        original(self, *args, **kwargs)

    monkeypatch.setattr(orchestrator_module.Orchestrator, "__init__", counted)
    with (
        Runtime.open(PIPELINE, llm_override="offline") as runtime,
        open_store(tmp_path / "state.sqlite", runtime.pipeline) as store,
    ):
        for _session in range(2):
            conversation = runtime.conversation(store)
            for message in ("How do I reset it?", "And then?"):
                asyncio.run(conversation.say(message))
    assert len(built) == 1


def test_a_round_leaves_the_orchestrator_as_it_found_it(tmp_path: Path) -> None:
    with Runtime.open(PIPELINE, llm_override="offline") as runtime:
        orchestrator = runtime.orchestrator()
        before = {name: id(value) for name, value in vars(orchestrator).items()}
        with open_store(tmp_path / "state.sqlite", runtime.pipeline) as store:
            asyncio.run(runtime.conversation(store).say("How do I reset it?"))
        assert {name: id(value) for name, value in vars(orchestrator).items()} == before
        assert orchestrator.checkpoint is None  # a round's checkpoint is given to run_round
