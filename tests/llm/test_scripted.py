from __future__ import annotations

from pathlib import Path

import pytest

from runner.config.model import LLMConfig, ScriptRule
from runner.llm import ScriptError, ScriptMissError, build_client
from runner.llm.types import LLMRequest, Purpose

from .helpers import run, scripted


def request(purpose: Purpose = Purpose.ANSWER, prompt: str = "p", **kwargs: object) -> LLMRequest:
    return LLMRequest(purpose, prompt, **kwargs)  # type: ignore[arg-type]


def test_the_first_matching_rule_answers() -> None:
    client = scripted(
        ScriptRule(reply="first", purpose="answer"),
        ScriptRule(reply="second", purpose="answer"),
    )
    assert run(client.complete(request())).text == "first"


def test_rules_match_purpose_tool_task_and_prompt() -> None:
    client = scripted(
        ScriptRule(reply="wrong purpose", purpose="compose"),
        ScriptRule(reply="wrong tool", tool="other"),
        ScriptRule(reply="wrong task", task=r"^Bye"),
        ScriptRule(reply="wrong prompt", prompt=r"nowhere"),
        ScriptRule(
            reply="all match",
            purpose="tool",
            tool="test.compat",
            task=r"^Hello",
            prompt=r"ren.ered",
        ),
    )
    asked = request(Purpose.TOOL, "rendered", subject="Hello there", tool="compat")
    assert run(client.complete(asked)).text == "all match"


def test_a_rule_with_times_stops_answering_after_that_many() -> None:
    client = scripted(ScriptRule(reply="once", times=1), ScriptRule(reply="after"))
    assert [run(client.complete(request())).text for _ in range(3)] == ["once", "after", "after"]


def test_a_mapping_reply_is_sent_as_json_and_validated() -> None:
    client = scripted(ScriptRule(reply={"enough": True, "reason": "ok"}, purpose="gatekeeper"))
    schema = {"type": "object", "properties": {"enough": {"type": "boolean"}}}
    reply = run(client.complete(request(Purpose.GATEKEEPER, schema=schema)))
    assert reply.data == {"enough": True, "reason": "ok"}


def test_an_unmatched_request_is_an_error_that_shows_the_request() -> None:
    client = scripted(ScriptRule(reply="x", purpose="answer"))
    asked = request(Purpose.READ_PAGE, "line one\nline two", subject="Where?", tool="search")
    with pytest.raises(ScriptMissError) as caught:
        run(client.complete(asked))
    message = str(caught.value)
    for expected in (
        "purpose: read_page",
        "tool:    search",
        "'Where?'",
        "| line two",
        "fallback: offline",
    ):
        assert expected in message


def test_fallback_offline_answers_what_no_rule_matches() -> None:
    client = scripted(ScriptRule(reply="x", purpose="answer"), fallback="offline")
    facts = {"question": "q", "passages": []}
    reply = run(client.complete(request(Purpose.GATEKEEPER, facts=facts, schema={})))
    assert reply.data["enough"] is False


def test_a_script_file_adds_rules_before_the_pipelines_own(tmp_path: Path) -> None:
    script = tmp_path / "script.yaml"
    script.write_text("- {purpose: answer, reply: from the file}\n", encoding="utf-8")
    config = LLMConfig(provider="offline", script=(ScriptRule(reply="inline"),))
    client = build_client(config, script=script, environ={})
    assert run(client.complete(request())).text == "from the file"


def test_a_script_file_may_say_fallback_offline(tmp_path: Path) -> None:
    script = tmp_path / "script.yaml"
    script.write_text(
        "fallback: offline\nrules:\n  - {purpose: compose, reply: x}\n", encoding="utf-8"
    )
    client = build_client(LLMConfig(), script=script, environ={})
    facts = {"question": "q", "guaranteed": [], "context": []}
    assert "does not answer" in run(client.complete(request(facts=facts))).text


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("- {purpose: answer}\n", "rule 1: a rule is a mapping with at least `reply:`"),
        ("- {purpose: anser, reply: x}\n", "rule 1: unknown purpose 'anser'"),
        ("- {reply: x, when: y}\n", "rule 1: unknown field(s) when"),
        ("- {reply: x, times: 0}\n", "`times` must be a positive whole number"),
        ("- {reply: x, task: '(unclosed'}\n", "`task` is not a valid regular expression"),
        ("reply: x\n", "an LLM script is a YAML list of rules"),
    ],
)
def test_a_malformed_script_file_names_the_file_and_the_fix(
    tmp_path: Path, content: str, message: str
) -> None:
    script = tmp_path / "script.yaml"
    script.write_text(content, encoding="utf-8")
    with pytest.raises(ScriptError) as caught:
        build_client(LLMConfig(), script=script, environ={})
    assert str(script) in str(caught.value) and message in str(caught.value)
