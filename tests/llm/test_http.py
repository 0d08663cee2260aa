"""Retry, timeout, concurrency, cache and accounting against a real HTTP server speaking the
OpenAI chat-completions protocol (and Ollama's), through the real llama-index clients."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from runner.config.model import LLMConfig, ModelSettings
from runner.llm import LLMCallError, LLMConfigError, LLMReplyError, build_client
from runner.llm.client import ProviderClient
from runner.llm.types import LLMRequest, Purpose

from .fake_servers import FakeLLMServer, Step, error, reply, stall
from .helpers import http_client, run

SCHEMA = {"type": "object", "properties": {"enough": {"type": "boolean"}}, "required": ["enough"]}
QUESTION = LLMRequest(Purpose.ANSWER, "How long does the battery last?", subject="battery")


def client_for(server: FakeLLMServer, tmp_path: Path, **overrides: object) -> ProviderClient:
    return http_client(server, **overrides)


def test_a_5xx_is_retried_and_then_succeeds(llm_server: FakeLLMServer, tmp_path: Path) -> None:
    llm_server.script(error(500), error(503), reply("Ten hours."))
    client = client_for(llm_server, tmp_path)
    answer = run(client.complete(QUESTION))
    assert (answer.text, answer.attempts) == ("Ten hours.", 3)
    assert [c.outcome for c in client.calls] == ["error", "error", "ok"]
    assert "InternalServerError" in (client.calls[0].error or "")


def test_a_429_is_retried(llm_server: FakeLLMServer, tmp_path: Path) -> None:
    llm_server.script(error(429, "slow down"), reply("fine"))
    assert run(client_for(llm_server, tmp_path).complete(QUESTION)).text == "fine"
    assert len(llm_server.requests) == 2


def test_a_400_is_not_retried(llm_server: FakeLLMServer, tmp_path: Path) -> None:
    llm_server.script(error(400, "bad model"), reply("never sent"))
    with pytest.raises(LLMCallError) as caught:
        run(client_for(llm_server, tmp_path).complete(QUESTION))
    assert len(llm_server.requests) == 1
    assert "not retried" in str(caught.value) and "bad model" in str(caught.value)


def test_a_stalled_call_times_out_and_is_retried(llm_server: FakeLLMServer, tmp_path: Path) -> None:
    llm_server.script(stall(10), reply("after the stall"))
    client = client_for(llm_server, tmp_path, timeout_s=1.0)
    assert run(client.complete(QUESTION)).text == "after the stall"
    assert client.calls[0].outcome == "error"


def test_retries_run_out_with_a_clear_error(llm_server: FakeLLMServer, tmp_path: Path) -> None:
    llm_server.script(error(502))
    with pytest.raises(LLMCallError) as caught:
        run(client_for(llm_server, tmp_path, max_retries=1).complete(QUESTION))
    assert "gave up after 2 attempt(s)" in str(caught.value)
    assert "purpose answer" in str(caught.value)
    assert len(llm_server.requests) == 2


def test_broken_json_gets_a_structured_retry(llm_server: FakeLLMServer, tmp_path: Path) -> None:
    llm_server.script(reply('{"enough": tru'), reply('```json\n{"enough": true}\n```'))
    request = LLMRequest(Purpose.GATEKEEPER, "Enough?", schema=SCHEMA)
    assert run(client_for(llm_server, tmp_path).complete(request)).data == {"enough": True}
    retried = llm_server.requests[1]["messages"][-1]["content"]
    assert retried.startswith("Enough?") and "could not be used: no JSON found" in retried


def test_broken_json_that_stays_broken_fails_cleanly(
    llm_server: FakeLLMServer, tmp_path: Path
) -> None:
    llm_server.script(reply("{{{"))
    request = LLMRequest(Purpose.GATEKEEPER, "Enough?", tool="gate", schema=SCHEMA)
    with pytest.raises(LLMReplyError, match="gatekeeper reply for tool gate"):
        run(client_for(llm_server, tmp_path).complete(request))
    assert len(llm_server.requests) == 2  # structured_retries: 1


def test_a_body_that_is_not_json_at_all_is_an_error(
    llm_server: FakeLLMServer, tmp_path: Path
) -> None:
    llm_server.script(Step(raw_body="<html>gateway</html>"))
    with pytest.raises(LLMCallError):
        run(client_for(llm_server, tmp_path, max_retries=0).complete(QUESTION))


def test_concurrency_is_limited_per_client(llm_server: FakeLLMServer, tmp_path: Path) -> None:
    llm_server.hold_s = 0.05
    client = client_for(llm_server, tmp_path, concurrency=2, timeout_s=5)

    async def many() -> None:
        await asyncio.gather(*(client.complete(QUESTION) for _ in range(6)))

    run(many())
    assert len(llm_server.requests) == 6
    assert llm_server.max_in_flight <= 2


def test_provider_token_usage_is_reported(llm_server: FakeLLMServer, tmp_path: Path) -> None:
    llm_server.script(reply("x", usage=(123, 45)))
    client = client_for(llm_server, tmp_path)
    answer = run(client.complete(QUESTION))
    assert (answer.prompt_tokens, answer.completion_tokens) == (123, 45)
    assert client.calls[0].tokens_estimated is False
    assert client.stats["by_purpose"]["answer"]["prompt_tokens"] == 123


def test_missing_usage_is_estimated(llm_server: FakeLLMServer, tmp_path: Path) -> None:
    llm_server.script(reply("Ten hours.", usage=None))
    client = client_for(llm_server, tmp_path)
    answer = run(client.complete(QUESTION))
    assert answer.completion_tokens == 3 and client.calls[0].tokens_estimated is True


def test_the_request_carries_model_temperature_and_max_tokens_per_purpose(
    llm_server: FakeLLMServer, tmp_path: Path
) -> None:
    purposes = {"suitability": ModelSettings(model="small", temperature=0.5, max_tokens=20)}
    client = client_for(llm_server, tmp_path, purposes=purposes)
    llm_server.script(reply('{"a": true}'))
    run(client.complete(LLMRequest(Purpose.SUITABILITY, "which?", schema={"type": "object"})))
    run(client.complete(QUESTION))
    small, big = llm_server.requests
    assert (small["model"], small["temperature"], small["max_tokens"]) == ("small", 0.5, 20)
    assert (big["model"], big["temperature"], big["max_tokens"]) == ("test-model", 0.0, 1024)


def test_the_key_comes_from_the_named_environment_variable(
    llm_server: FakeLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TEST_LLM_KEY", "sk-secret")
    run(client_for(llm_server, tmp_path, api_key_env="TEST_LLM_KEY").complete(QUESTION))
    assert llm_server.authorizations == ["Bearer sk-secret"]


def test_no_key_is_sent_that_the_pipeline_did_not_name(
    llm_server: FakeLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-for-this-server")
    run(client_for(llm_server, tmp_path).complete(QUESTION))
    assert llm_server.authorizations == ["Bearer no-key"]


def test_an_unset_key_variable_is_a_clear_error(llm_server: FakeLLMServer, tmp_path: Path) -> None:
    with pytest.raises(LLMConfigError, match="'NOT_SET_ANYWHERE', which is not set"):
        client_for(llm_server, tmp_path, api_key_env="NOT_SET_ANYWHERE")


def test_cache_hits_skip_the_server(llm_server: FakeLLMServer, tmp_path: Path) -> None:
    llm_server.script(reply("first"), reply("second"))
    cache = tmp_path / "cache.sqlite"
    first = client_for(llm_server, tmp_path, cache=True, cache_path=cache)
    assert run(first.complete(QUESTION)).text == "first"
    again = run(first.complete(QUESTION))
    later_run = client_for(llm_server, tmp_path, cache=True, cache_path=cache)
    from_disk = run(later_run.complete(QUESTION))
    assert (again.text, again.cached, from_disk.text, from_disk.cached) == (
        "first",
        True,
        "first",
        True,
    )
    assert len(llm_server.requests) == 1
    assert [c.cached for c in first.calls] == [False, True]


def test_the_cache_key_includes_the_model_and_prompt(
    llm_server: FakeLLMServer, tmp_path: Path
) -> None:
    llm_server.script(reply("a"), reply("b"), reply("c"))
    cache = tmp_path / "cache.sqlite"
    client = client_for(llm_server, tmp_path, cache=True, cache_path=cache)
    run(client.complete(QUESTION))
    run(client.complete(LLMRequest(Purpose.ANSWER, "Another prompt")))
    other_model = client_for(llm_server, tmp_path, cache=True, cache_path=cache, model="other")
    run(other_model.complete(QUESTION))
    assert len(llm_server.requests) == 3


def test_the_cache_is_off_by_default(llm_server: FakeLLMServer, tmp_path: Path) -> None:
    client = client_for(llm_server, tmp_path)
    run(client.complete(QUESTION))
    run(client.complete(QUESTION))
    assert len(llm_server.requests) == 2 and client.cache is None


def test_an_invalid_reply_is_never_cached(llm_server: FakeLLMServer, tmp_path: Path) -> None:
    llm_server.script(reply("not json"), reply('{"enough": false}'), reply("not json"))
    cache = tmp_path / "cache.sqlite"
    request = LLMRequest(Purpose.GATEKEEPER, "Enough?", schema=SCHEMA)
    client = client_for(llm_server, tmp_path, cache=True, cache_path=cache)
    run(client.complete(request))
    # the first prompt's reply was unusable, so it is asked again; the retried prompt's valid
    # reply comes from the cache
    assert run(client.complete(request)).data == {"enough": False}
    assert [(c.outcome, c.cached) for c in client.calls] == [
        ("invalid", False),
        ("ok", False),
        ("invalid", False),
        ("ok", True),
    ]
    assert len(llm_server.requests) == 3


def test_ollama_answers_through_its_own_protocol_with_the_schema_as_format(
    llm_server: FakeLLMServer, tmp_path: Path
) -> None:
    # the `ollama` extra; the `dev` extra should carry it so that this never skips in CI
    pytest.importorskip("llama_index.llms.ollama")
    llm_server.script(reply('{"enough": true}', usage=(30, 4)))
    config = LLMConfig(provider="ollama", model="llama3.1", api_base=llm_server.url)
    client = build_client(config, environ={})
    answer = run(client.complete(LLMRequest(Purpose.GATEKEEPER, "Enough?", schema=SCHEMA)))
    assert answer.data == {"enough": True}
    assert (answer.prompt_tokens, answer.completion_tokens) == (30, 4)
    sent = llm_server.requests[0]
    assert sent["model"] == "llama3.1"
    assert sent["format"] == {**SCHEMA, "additionalProperties": False}
    assert sent["messages"][-1]["content"] == "Enough?"


def test_replies_from_the_cache_are_recorded_too(llm_server: FakeLLMServer, tmp_path: Path) -> None:
    from runner.llm.cassette import load

    cache = tmp_path / "cache.sqlite"
    run(client_for(llm_server, tmp_path, cache=True, cache_path=cache).complete(QUESTION))
    cassette = tmp_path / "c.yaml"
    recording = build_client(
        LLMConfig(
            provider="openai_like",
            model="test-model",
            api_base=f"{llm_server.url}/v1",
            cache=True,
            cache_path=cache,
        ),
        record=cassette,
        environ={},
    )
    assert run(recording.complete(QUESTION)).cached is True
    assert [entry.prompt for entry in load(cassette)] == [QUESTION.prompt]
