"""docs/orchestration.md's complete `python` tool example, run exactly as the page shows it."""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path

import pytest

from runner.app import Runtime
from runner.engine.state import SessionState
from runner.engine.task import TaskStatus

from .kit import check_round

DOC = Path(__file__).resolve().parents[2] / "docs" / "orchestration.md"
MODULE = "pharma_interactions"


def _block(first_line: str) -> str:
    """The fenced code block of the page whose first line is `first_line`."""
    for block in re.findall(r"```\w+\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S):
        if block.startswith(first_line + "\n"):
            return block
    raise AssertionError(f"docs/orchestration.md has no code block starting {first_line!r}")


@pytest.fixture
def runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / f"{MODULE}.py").write_text(
        _block(f"# plugins/{MODULE}.py"), encoding="utf-8"
    )
    (tmp_path / "pharma.yaml").write_text(_block("# pharma.yaml"), encoding="utf-8")
    monkeypatch.setattr(sys, "path", list(sys.path))  # the python kind adds plugins/ to it
    monkeypatch.delitem(sys.modules, MODULE, raising=False)
    with Runtime.open(tmp_path / "pharma.yaml", allow_python=True) as opened:
        yield opened
    sys.modules.pop(MODULE, None)


def _ask(runtime: Runtime, message: str) -> tuple[SessionState, object]:
    state = SessionState.new("doc", runtime.pipeline)
    result = asyncio.run(runtime.orchestrator().run_round(state, message))
    check_round(result, state)
    return state, result


def test_the_documented_plugin_finds_an_interaction_and_asks_for_advice(runtime):
    state, result = _ask(runtime, "Can I take Aspirin with Warfarin?")
    assert result.outcome == "answer"
    assert result.answer.startswith("Aspirin and Warfarin interact.")
    assert [(t.task_no, t.status) for t in state.root.sub_tasks] == [
        ("1.1", TaskStatus.DONE),
        ("1.2", TaskStatus.DONE),
        ("1.advice", TaskStatus.DONE),
    ]
    assert state.buffer.snapshot()["1.advice:pharmacist"][0].guaranteed is True
    assert result.tasks["tools"][0]["reason"] == "after_subtasks"


def test_the_documented_plugin_skips_the_advice_when_nothing_interacts(runtime):
    state, result = _ask(runtime, "Can I take Panadol with Aspirin?")
    assert result.answer == "No known interaction between Aspirin, Panadol."
    assert state.root.find("1.advice").status is TaskStatus.SKIPPED
