"""Constrained structured replies against a real local HTTP server: the schema each mode sends,
the step down when a server refuses it, and the replies small models give (issue 12)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from runner.config.model import LLMConfig, ModelSettings
from runner.llm import LLMCallError, LLMReplyError, build_client
from runner.llm.types import LLMRequest, Purpose

from .fake_servers import FakeLLMServer, Step, error, reply
from .helpers import http_client as client_for
from .helpers import run

GATE = {
    "type": "object",
    "properties": {"enough": {"type": "boolean"}, "reason": {"type": "string"}},
    "required": ["enough"],
}
CLOSED_GATE = {**GATE, "required": ["enough", "reason"], "additionalProperties": False}
GATEKEEPER = LLMRequest(Purpose.GATEKEEPER, "Enough?", schema=GATE)
ONE_TOOL = {
    "type": "object",
    "properties": {"manual_rag": {"type": "boolean"}},
    "required": ["manual_rag"],
}
# llama-cpp-python's server answers an unknown response_format type with HTTP 500
LLAMA_CPP_PYTHON_REFUSAL = (
    500,
    "1 validation error: {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
    "'msg': \"Input should be 'text' or 'json_object'\"}",
)


# --- what each mode sends ---------------------------------------------------------------------


def test_json_schema_mode_sends_the_closed_schema_as_response_format(
    llm_server: FakeLLMServer,
) -> None:
    llm_server.script(reply('{"enough": true, "reason": "all there"}'))
    run(client_for(llm_server).complete(GATEKEEPER))
    assert llm_server.requests[0]["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "gatekeeper", "schema": CLOSED_GATE, "strict": True},
    }


def test_json_object_mode_sends_the_json_mode_with_the_schema(llm_server: FakeLLMServer) -> None:
    llm_server.script(reply('{"enough": true, "reason": ""}'))
    run(client_for(llm_server, structured="json_object").complete(GATEKEEPER))
    assert llm_server.requests[0]["response_format"] == {
        "type": "json_object",
        "schema": CLOSED_GATE,
    }


def test_prompt_mode_sends_no_response_format(llm_server: FakeLLMServer) -> None:
    llm_server.script(reply('{"enough": true}'))
    run(client_for(llm_server, structured="prompt").complete(GATEKEEPER))
    assert "response_format" not in llm_server.requests[0]


def test_a_purpose_can_override_the_mode(llm_server: FakeLLMServer) -> None:
    llm_server.script(reply('{"enough": true}'))
    purposes = {"gatekeeper": ModelSettings(structured="prompt")}
    run(client_for(llm_server, purposes=purposes).complete(GATEKEEPER))
    assert "response_format" not in llm_server.requests[0]


def test_a_text_purpose_sends_no_response_format(llm_server: FakeLLMServer) -> None:
    run(client_for(llm_server).complete(LLMRequest(Purpose.ANSWER, "Answer")))
    assert "response_format" not in llm_server.requests[0]


def test_nested_objects_are_closed_too(llm_server: FakeLLMServer) -> None:
    schema = {
        "type": "object",
        "properties": {
            "product": {"anyOf": [{"type": "object", "properties": {"sku": {}}}, {"type": "null"}]}
        },
    }
    llm_server.script(reply('{"product": null}'))
    run(client_for(llm_server).complete(LLMRequest(Purpose.EXTRACT, "x", schema=schema)))
    sent = llm_server.requests[0]["response_format"]["json_schema"]["schema"]
    nested = sent["properties"]["product"]["anyOf"][0]
    assert (sent["required"], sent["additionalProperties"]) == (["product"], False)
    assert (nested["required"], nested["additionalProperties"]) == (["sku"], False)


# --- a server that refuses the field --------------------------------------------------------


def test_a_400_naming_response_format_is_asked_again_at_once_in_json_object_mode(
    llm_server: FakeLLMServer,
) -> None:
    llm_server.refuse_schema = (400, "response_format.type 'json_schema' is not supported")
    llm_server.script(reply('{"enough": false, "reason": "no price"}'))
    client = client_for(llm_server)
    assert run(client.complete(GATEKEEPER)).data == {"enough": False, "reason": "no price"}
    kinds = [body["response_format"]["type"] for body in llm_server.requests]
    assert kinds == ["json_schema", "json_object"]
    assert [call.outcome for call in client.calls] == ["error", "ok"]


def test_the_fallback_is_remembered_for_the_run_and_said_once(llm_server: FakeLLMServer) -> None:
    llm_server.refuse_schema = LLAMA_CPP_PYTHON_REFUSAL
    llm_server.script(reply('{"enough": true, "reason": ""}'))
    client = client_for(llm_server)
    run(client.complete(GATEKEEPER))
    run(client.complete(GATEKEEPER))
    assert llm_server.refused == 1  # the second request went straight to json_object
    assert (
        len(client.notices) == 1
        and "json_object mode for the rest of the run" in (client.notices[0])
    )
    notices = [call.notice for call in client.calls if call.notice]
    assert notices == client.notices
    modes = [call.structured for call in client.calls]
    assert modes == ["json_schema", "json_object", "json_object"]


def test_a_server_refusing_every_structured_field_ends_in_prompt_mode(
    llm_server: FakeLLMServer,
) -> None:
    llm_server.script(
        error(400, "unknown field response_format"), reply('{"enough": true, "reason": "x"}')
    )
    llm_server.refuse_schema = (400, "unknown field response_format")
    client = client_for(llm_server)
    assert run(client.complete(GATEKEEPER)).data["enough"] is True
    assert "response_format" not in llm_server.requests[-1]
    assert len(client.notices) == 2


def test_a_400_that_does_not_name_the_field_is_not_a_refusal(llm_server: FakeLLMServer) -> None:
    llm_server.script(error(400, "model 'x' not found"))
    with pytest.raises(LLMCallError, match="not retried"):
        run(client_for(llm_server).complete(GATEKEEPER))
    assert len(llm_server.requests) == 1


def test_ollama_steps_down_from_a_schema_format_to_its_json_mode(
    llm_server: FakeLLMServer,
) -> None:
    pytest.importorskip("llama_index.llms.ollama")
    llm_server.refuse_schema = (400, 'invalid format: expected "json" or a JSON schema')
    llm_server.script(reply('{"enough": true}'))
    client = build_client(
        LLMConfig(provider="ollama", model="llama3.1", api_base=llm_server.url), environ={}
    )
    assert run(client.complete(GATEKEEPER)).data == {"enough": True}
    formats = [body.get("format") for body in llm_server.requests]
    assert formats == [CLOSED_GATE, "json"]


# --- replies small models give ----------------------------------------------------------------


def test_a_fenced_reply_after_a_sentence_is_used(llm_server: FakeLLMServer) -> None:
    llm_server.script(reply('Here you are:\n```json\n{"enough": true}\n```'))
    assert run(client_for(llm_server).complete(GATEKEEPER)).data == {"enough": True}
    assert len(llm_server.requests) == 1


def test_a_bare_false_answers_a_single_tool_suitability(llm_server: FakeLLMServer) -> None:
    llm_server.script(reply("False"))
    request = LLMRequest(Purpose.SUITABILITY, "Which?", schema=ONE_TOOL)
    assert run(client_for(llm_server).complete(request)).data == {"manual_rag": False}
    assert len(llm_server.requests) == 1


def test_a_bare_yes_with_a_sentence_answers_the_gatekeeper(llm_server: FakeLLMServer) -> None:
    llm_server.script(reply("Yes. The pages give the price."))
    data = run(client_for(llm_server).complete(GATEKEEPER)).data
    assert data == {"enough": True, "reason": "The pages give the price."}


def test_an_echoed_schema_is_re_asked_saying_so(llm_server: FakeLLMServer) -> None:
    llm_server.script(
        reply('{"type": "object", "properties": {"enough": {"type": "boolean"}}}'),
        reply('{"enough": false}'),
    )
    assert run(client_for(llm_server).complete(GATEKEEPER)).data == {"enough": False}
    retried = llm_server.requests[1]["messages"][-1]["content"]
    assert "the JSON Schema itself" in retried and "Do not repeat the schema" in retried


# --- faults (issue 11, items 14-16) -----------------------------------------------------------


def test_an_empty_answer_is_asked_again(llm_server: FakeLLMServer) -> None:
    llm_server.script(reply("   "), reply("Ten hours."))
    client = client_for(llm_server)
    assert run(client.complete(LLMRequest(Purpose.ANSWER, "How long?"))).text == "Ten hours."
    assert [call.outcome for call in client.calls] == ["invalid", "ok"]
    assert "previous reply was empty" in llm_server.requests[1]["messages"][-1]["content"]


def test_an_empty_tool_reply_that_stays_empty_fails_cleanly(llm_server: FakeLLMServer) -> None:
    llm_server.script(reply(""))
    request = LLMRequest(Purpose.TOOL, "Write it", tool="troubleshooter")
    with pytest.raises(LLMReplyError, match=r"tool reply for tool troubleshooter .* was empty"):
        run(client_for(llm_server).complete(request))
    assert len(llm_server.requests) == 2


def test_a_200_whose_body_is_not_json_is_retried_like_a_5xx(llm_server: FakeLLMServer) -> None:
    llm_server.script(Step(raw_body="<html>bad gateway</html>"), reply("fine"))
    client = client_for(llm_server)
    assert run(client.complete(LLMRequest(Purpose.ANSWER, "Hi"))).text == "fine"
    assert [call.outcome for call in client.calls] == ["error", "ok"]


def test_a_body_that_stays_broken_does_not_blame_the_settings(llm_server: FakeLLMServer) -> None:
    llm_server.script(Step(raw_body="<html>bad gateway</html>"))
    with pytest.raises(LLMCallError) as caught:
        run(client_for(llm_server, max_retries=1).complete(LLMRequest(Purpose.ANSWER, "Hi")))
    message = str(caught.value)
    assert "gave up after 2 attempt(s)" in message and "not JSON" in message
    for blamed in ("llm.model", "llm.api_base", "api_key_env"):
        assert blamed not in message


def test_latency_leaves_out_the_wait_for_a_concurrency_slot(llm_server: FakeLLMServer) -> None:
    llm_server.hold_s = 0.3
    client = client_for(llm_server, concurrency=1)

    async def two() -> None:
        await asyncio.gather(*(client.complete(LLMRequest(Purpose.ANSWER, "Hi")) for _ in "ab"))

    started = time.perf_counter()
    run(two())
    wall_ms = (time.perf_counter() - started) * 1000
    queued = max(client.calls, key=lambda call: call.queue_ms)
    assert queued.queue_ms >= 0.9 * 300  # it waited for the other call's whole hold
    # the wait and the call are disjoint: counting the wait in latency would exceed the wall
    assert queued.queue_ms + queued.latency_ms <= wall_ms + 50
    assert "queue_ms" in queued.to_json()


def test_ollama_context_window_defaults_to_runners_not_32k(
    llm_server: FakeLLMServer, tmp_path: Path
) -> None:
    pytest.importorskip("llama_index.llms.ollama")
    config = LLMConfig(provider="ollama", model="m", api_base=llm_server.url, context_window=2048)
    run(build_client(config, environ={}).complete(LLMRequest(Purpose.ANSWER, "Hi")))
    assert llm_server.requests[0]["options"]["num_ctx"] == 2048


def test_the_new_call_fields_meet_the_trace_schema(llm_server: FakeLLMServer) -> None:
    from runner.trace import schema_problems

    llm_server.refuse_schema = LLAMA_CPP_PYTHON_REFUSAL
    llm_server.script(reply('{"enough": true, "reason": ""}'))
    client = client_for(llm_server)
    run(client.complete(GATEKEEPER))
    for record in client.calls:
        event = {"seq": 1, "ms": 0.0, "event": "llm.call", "task": "1", **record.to_json()}
        assert schema_problems("trace", event, "llm.call") == []
    assert {"queue_ms", "structured", "notice"} <= set(client.calls[0].to_json())
