"""A server that refuses the structured-output field: the fallback is said once, as a warning of
the round that met it (and so on stderr), and a notice is no failure (issue 12, item 1)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from click.testing import CliRunner

from runner.app import Runtime
from runner.cli import main
from runner.engine.outcome import RoundResult
from runner.sessions import open_store

from .fake_servers import FakeLLMServer, reply
from .test_decoding import LLAMA_CPP_PYTHON_REFUSAL

# two prompt tools: a round asks for one suitability reply (a schema), runs the chosen tool and
# writes the final answer
PIPELINE = """\
version: 1
domain: notice
tools:
  - name: howto
    kind: prompt
    description: Explains how to do something.
    instruction: Does the user ask how to do something?
    prompt: "Explain: {{ text }}"
  - name: price
    kind: prompt
    description: Says what something costs.
    instruction: Does the user ask what something costs?
    prompt: "Price: {{ text }}"
llm:
  provider: openai_like
  model: test-model
  api_base: API_BASE
  max_retries: 0
"""
SUITABLE = json.dumps({"howto": True, "price": False})
QUESTION = "How do I descale the kettle?"


def _pipeline(tmp_path: Path, server: FakeLLMServer) -> Path:
    path = tmp_path / "notice.yaml"
    path.write_text(PIPELINE.replace("API_BASE", f"{server.url}/v1"), encoding="utf-8")
    return path


def _refusing(server: FakeLLMServer) -> FakeLLMServer:
    server.refuse_schema = LLAMA_CPP_PYTHON_REFUSAL
    server.script(reply(SUITABLE), reply("Fill it with vinegar."))
    return server


def _rounds(tmp_path: Path, server: FakeLLMServer, *messages: str) -> list[RoundResult]:
    """Rounds of one conversation, on one runtime (one run of the LLM client)."""
    with (
        Runtime.open(_pipeline(tmp_path, server)) as runtime,
        open_store(None, runtime.pipeline) as store,
    ):
        conversation = runtime.conversation(store)
        return [asyncio.run(conversation.say(message)) for message in messages]


def _notices(warnings: list[str]) -> list[str]:
    return [warning for warning in warnings if "for the rest of the run" in warning]


def test_the_round_that_met_the_refusal_says_it_once_in_its_warnings(
    llm_server: FakeLLMServer, tmp_path: Path
) -> None:
    _refusing(llm_server)
    [result] = _rounds(tmp_path, llm_server, QUESTION)
    assert result.outcome == "answer"
    [notice] = _notices(result.warnings)
    assert "refused `response_format` in json_schema mode" in notice
    assert "json_object mode" in notice
    assert [event["message"] for event in result.trace.of("warning")] == [notice]


def test_a_fallback_notice_does_not_make_the_round_degraded(
    llm_server: FakeLLMServer, tmp_path: Path
) -> None:
    _refusing(llm_server)
    [result] = _rounds(tmp_path, llm_server, QUESTION)
    assert _notices(result.warnings)
    assert not result.degraded and result.to_json()["degraded"] is False


def test_later_rounds_of_the_run_do_not_repeat_the_notice(
    llm_server: FakeLLMServer, tmp_path: Path
) -> None:
    _refusing(llm_server)
    round_replies = (reply(SUITABLE), reply("Fill it with vinegar."), reply("Use vinegar."))
    llm_server.script(*round_replies, *round_replies)
    first, second = _rounds(tmp_path, llm_server, QUESTION, "How do I rinse it?")
    assert len(_notices(first.warnings)) == 1
    assert second.outcome == "answer" and _notices(second.warnings) == []
    assert llm_server.refused == 1  # the second round asked in json_object mode at once


def test_runner_run_prints_the_notice_on_stderr_in_text_mode(
    llm_server: FakeLLMServer, tmp_path: Path
) -> None:
    _refusing(llm_server)
    outcome = CliRunner().invoke(main, ["run", str(_pipeline(tmp_path, llm_server)), QUESTION])
    assert outcome.exit_code == 0, outcome.output
    assert "Fill it with vinegar." in outcome.stdout
    notices = [line for line in outcome.stderr.splitlines() if "for the rest of the run" in line]
    assert len(notices) == 1 and notices[0].startswith("warning: the openai_like server refused")
    assert "degraded" not in outcome.stderr
