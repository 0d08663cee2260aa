"""An extracted value the conversation does not give is dropped, the round's trace says so, and
the tool asks (issue 22, item 8; C24)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from runner.app import Runtime
from runner.sessions import open_store
from tests.examples_kit import copy_example

SUPPORT = Path(__file__).resolve().parents[2] / "pipelines" / "support"


def test_an_invented_model_number_is_dropped_in_the_trace_and_the_tool_asks(
    tmp_path: Path,
) -> None:
    copy_example("support", tmp_path / "support")
    script = tmp_path / "script.yaml"
    script.write_text(
        "rules:\n"
        "  - {purpose: extract, tool: warranty_check, reply: {model: KD-300i}}\n"
        "fallback: offline\n",
        encoding="utf-8",
    )
    with (
        Runtime.open(tmp_path / "support" / "support.yaml", llm_script=script) as runtime,
        open_store(None, runtime.pipeline) as store,
    ):
        result = asyncio.run(
            runtime.conversation(store).say("What warranty do I get on my washing machine?")
        )
    assert result.outcome == "clarification"
    messages = [event["message"] for event in result.trace.of("warning")]
    assert messages == [
        "warranty_check: the extracted model 'KD-300i' is dropped: it is neither in the "
        "conversation nor a known value the conversation names, so the tool treats it as not given"
    ]
    assert not result.degraded
