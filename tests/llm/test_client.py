"""The client's structured-reply retry and its accounting, driven by the scripted provider."""

from __future__ import annotations

import random

import pytest

from runner.config.model import ScriptRule
from runner.llm import LLMReplyError
from runner.llm.client import backoff_delay
from runner.llm.types import LLMRequest, Purpose
from runner.text.words import estimate_tokens

from .helpers import run, scripted

SCHEMA = {
    "type": "object",
    "properties": {"found": {"type": "boolean"}, "answer": {"type": "string"}},
    "required": ["found"],
}
PAGE = LLMRequest(Purpose.READ_PAGE, "Read this page.", subject="q", tool="search", schema=SCHEMA)


def test_an_invalid_structured_reply_is_asked_again_with_the_error() -> None:
    client = scripted(
        ScriptRule(reply='{"found": "maybe"}', times=1),
        ScriptRule(reply={"found": True, "answer": "yes"}, prompt="could not be used"),
    )
    reply = run(client.complete(PAGE))
    assert reply.data == {"found": True, "answer": "yes"}
    assert reply.attempts == 2
    assert [call.outcome for call in client.calls] == ["invalid", "ok"]
    assert "at found: 'maybe' is not of type 'boolean'" in (client.calls[0].error or "")


def test_a_reply_still_invalid_after_the_retries_fails_naming_purpose_and_tool() -> None:
    client = scripted(ScriptRule(reply="I am not sure."), structured_retries=2)
    with pytest.raises(LLMReplyError) as caught:
        run(client.complete(PAGE))
    message = str(caught.value)
    assert "read_page reply for tool search" in message
    assert "after 3 attempt(s)" in message and "no JSON found" in message
    assert caught.value.purpose == "read_page" and caught.value.tool == "search"
    assert len(client.calls) == 3


def test_no_retry_when_structured_retries_is_zero() -> None:
    client = scripted(ScriptRule(reply="nope"), structured_retries=0)
    with pytest.raises(LLMReplyError, match="after 1 attempt"):
        run(client.complete(PAGE))


def test_a_text_reply_of_citations_alone_is_asked_again_for_words() -> None:
    client = scripted(
        ScriptRule(reply="[4]", times=1),
        ScriptRule(reply="Fill it with vinegar [1].", prompt="held citations and no answer"),
    )
    reply = run(client.complete(LLMRequest(Purpose.ANSWER, "How do I descale it?")))
    assert reply.text == "Fill it with vinegar [1]."
    assert [call.outcome for call in client.calls] == ["invalid", "ok"]
    assert client.calls[0].error == "the reply held citations and nothing else"


def test_citations_in_runner_format_alone_are_no_answer_either() -> None:
    client = scripted(ScriptRule(reply=" [1][2] [manual.md p. 3]. "), structured_retries=1)
    with pytest.raises(LLMReplyError, match="held citations and nothing else"):
        run(client.complete(LLMRequest(Purpose.ANSWER, "How do I descale it?")))


def test_a_short_answer_beside_its_citation_is_usable() -> None:
    client = scripted(ScriptRule(reply="[2] 42"))
    reply = run(client.complete(LLMRequest(Purpose.ANSWER, "How many?")))
    assert reply.text == "[2] 42" and reply.attempts == 1


def test_a_prompt_tools_reply_of_bracketed_numbers_is_its_own_text() -> None:
    client = scripted(ScriptRule(reply="[2, 5]"))
    request = LLMRequest(Purpose.TOOL, "Which steps apply? Reply with their numbers.", tool="t")
    assert run(client.complete(request)).text == "[2, 5]"


def test_tokens_are_estimated_when_the_provider_reports_none() -> None:
    client = scripted(ScriptRule(reply="Ten hours, roughly."))
    request = LLMRequest(Purpose.ANSWER, "How long does it last?")
    reply = run(client.complete(request))
    assert reply.prompt_tokens == estimate_tokens(request.prompt) == 6
    assert reply.completion_tokens == 5
    assert client.calls[0].tokens_estimated is True


def test_stats_total_calls_and_tokens_by_purpose() -> None:
    client = scripted(
        ScriptRule(reply="a b c", purpose="answer"), ScriptRule(reply="d", purpose="compose")
    )
    for purpose in (Purpose.ANSWER, Purpose.ANSWER, Purpose.COMPOSE):
        run(client.complete(LLMRequest(purpose, "x y")))
    stats = client.stats
    assert stats["llm_calls"] == 3
    assert stats["by_purpose"]["answer"]["calls"] == 2
    assert stats["by_purpose"]["answer"]["prompt_tokens"] == 4
    assert stats["by_purpose"]["answer"]["completion_tokens"] == 6
    assert stats["by_purpose"]["compose"]["completion_tokens"] == 1
    assert (stats["prompt_tokens"], stats["completion_tokens"]) == (6, 7)


def test_call_records_carry_what_the_trace_needs() -> None:
    client = scripted(ScriptRule(reply="ok"))
    run(client.complete(LLMRequest(Purpose.TOOL, "p", tool="compat")))
    event = client.calls[0].to_json()
    assert {k: event[k] for k in ("purpose", "tool", "provider", "cached", "outcome")} == {
        "purpose": "tool",
        "tool": "compat",
        "provider": "scripted",
        "cached": False,
        "outcome": "ok",
    }
    assert event["latency_ms"] >= 0


def test_the_sync_wrapper_serves_the_edges() -> None:
    client = scripted(ScriptRule(reply="hi"))
    assert client.complete_sync(LLMRequest(Purpose.ANSWER, "x")).text == "hi"


def test_backoff_grows_exponentially_with_jitter_and_a_cap() -> None:
    rng = random.Random(7)
    for retry, ceiling in [(0, 0.5), (1, 1.0), (2, 2.0), (3, 4.0), (6, 8.0)]:
        delays = {backoff_delay(retry, 0.5, 8.0, rng) for _ in range(20)}
        assert all(ceiling / 2 <= delay <= ceiling for delay in delays)
        assert len(delays) > 1  # jittered, not a fixed step
