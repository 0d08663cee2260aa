"""A final answer that stays degenerate (a loop) is cut, and the round is degraded: a warning
on its task, `stats.failed.replies`, `degraded: true` (issue 22, item 9)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from runner.app import Runtime
from runner.sessions import open_store
from tests.examples_kit import copy_example

SUPPORT = Path(__file__).resolve().parents[2] / "pipelines" / "support"
LOOP = "Descale it every month. " * 10


def test_an_answer_that_keeps_looping_is_cut_and_the_round_is_degraded(tmp_path: Path) -> None:
    copy_example("support", tmp_path / "support")
    script = tmp_path / "script.yaml"
    script.write_text(
        f"rules:\n  - {{purpose: answer, reply: {LOOP.strip()!r}}}\nfallback: offline\n",
        encoding="utf-8",
    )
    with (
        Runtime.open(tmp_path / "support" / "support.yaml", llm_script=script) as runtime,
        open_store(None, runtime.pipeline) as store,
    ):
        result = asyncio.run(runtime.conversation(store).say("How do I descale my dishwasher?"))
    assert result.outcome == "answer"
    assert result.answer is not None and result.answer.startswith("Descale it every month.")
    assert result.answer.count("Descale it every month.") == 1
    assert result.degraded and result.stats["failed"]["replies"] == 1
    assert result.stats["by_purpose"]["answer"]["calls"] == 2  # asked again once
    (warning,) = result.warnings
    assert warning.startswith("task 1: the answer reply stayed degenerate: the sentence")
    assert result.validate() == []
