"""`runner test --llm SPEC`: every case on that LLM instead of its own (issue 12), here a local
fake OpenAI-compatible server that answers every request "Yes"."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from runner.cli import main
from runner.testing import run_files

from .fake_servers import FakeLLMServer, reply

CASES = Path(__file__).parent / "cases" / "override.yaml"


def test_the_override_answers_every_call_of_the_case(llm_server: FakeLLMServer) -> None:
    llm_server.script(reply("Yes"))
    spec = f"openai_like:test-model@{llm_server.url}/v1"
    [report] = run_files([CASES], llm_override=spec)
    assert report.passed, [turn.differences for case in report.cases for turn in case.turns]
    result = report.cases[0].turns[0].result
    assert result is not None and result["answer"] == "Yes"
    # every call of the round went to the server, none to the offline provider
    assert len(llm_server.requests) == result["stats"]["llm_calls"] > 0


def test_without_the_override_the_case_keeps_its_own_llm(llm_server: FakeLLMServer) -> None:
    [report] = run_files([CASES])
    assert report.passed and llm_server.requests == []


def test_the_command_takes_the_option(llm_server: FakeLLMServer) -> None:
    llm_server.script(reply("Yes"))
    spec = f"openai_like:test-model@{llm_server.url}/v1"
    outcome = CliRunner().invoke(main, ["test", str(CASES), "--llm", spec])
    assert outcome.exit_code == 0, outcome.output
    assert llm_server.requests
