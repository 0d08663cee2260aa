"""Each LLM call's prompt and reply on its `chat` span, as the GenAI conventions'
`gen_ai.input.messages` and `gen_ai.output.messages`, only when the user opted in to content
capture; they reach the observer in process, so the trace a session stores stays as it was,
and nothing that looks like a credential reaches a span.

The round: the support example on the offline LLM (see test_spans.py), whose calls are seen
as the provider received them."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from runner import observability
from runner.config import load_pipeline
from runner.llm import build_client
from runner.llm.client import ProviderClient
from runner.observability import FinishedRound
from runner.sessions import open_store

from .conftest import Telemetry, run_round

KEY = "sk-live4f9a8b7c6d5e4f3a2b1c"  # a credential a user pasted into their message


class Sent:
    """An offline client whose provider notes each prompt it was sent and the reply it gave."""

    def __init__(self, pipeline: Path) -> None:
        loaded = load_pipeline(pipeline)
        self.client: ProviderClient = build_client(loaded.llm, pipeline=loaded, override="offline")
        self.calls: list[tuple[str, str, str]] = []  # purpose, prompt, reply
        generate = self.client.provider.generate

        async def noting(request: Any, settings: Any) -> Any:
            reply = await generate(request, settings)
            self.calls.append((request.purpose.value, request.prompt, reply.text))
            return reply

        self.client.provider.generate = noting  # type: ignore[method-assign]


def said_on(span: Any, attribute: str) -> list[dict[str, Any]]:
    return json.loads(span.attributes[attribute])


@pytest.fixture
def opted_in(support: Path, tmp_path: Path) -> tuple[Telemetry, Sent]:
    telemetry, sent = Telemetry(content=True), Sent(support)
    run_round(support, tmp_path, telemetry, client=sent.client)
    return telemetry, sent


def test_opted_in_each_chat_span_carries_the_prompt_sent_and_the_reply(opted_in):
    telemetry, sent = opted_in
    told = []
    for span in telemetry.named("chat "):
        [asked] = said_on(span, "gen_ai.input.messages")
        [answered] = said_on(span, "gen_ai.output.messages")
        assert asked["role"] == "user" and asked["parts"][0]["type"] == "text"
        assert answered["role"] == "assistant" and answered["finish_reason"] == "stop"
        purpose = span.attributes["runner.purpose"]
        told.append((purpose, asked["parts"][0]["content"], answered["parts"][0]["content"]))
    assert len(sent.calls) >= 5
    assert Counter(told) == Counter(sent.calls)


def test_a_failed_call_carries_its_prompt_and_no_reply(support, tmp_path):
    script = tmp_path / "script.yaml"  # the gatekeeper's call finds no rule: the round fails
    script.write_text("- {purpose: suitability, reply: {troubleshooter: false}}\n", "utf-8")
    telemetry = Telemetry(content=True)
    run_round(support, tmp_path, telemetry, llm_script=script)
    [failed] = [
        span for span in telemetry.named("chat ") if span.status.status_code.name == "ERROR"
    ]
    [asked] = said_on(failed, "gen_ai.input.messages")
    assert "KW-620" in asked["parts"][0]["content"]
    assert "gen_ai.output.messages" not in failed.attributes


def test_not_opted_in_no_chat_span_carries_a_prompt_or_a_reply(support, tmp_path):
    telemetry, sent = Telemetry(content=False), Sent(support)
    run_round(support, tmp_path, telemetry, client=sent.client)
    for span in telemetry.named("chat "):
        assert "gen_ai.input.messages" not in span.attributes
        assert "gen_ai.output.messages" not in span.attributes
    prompts = {prompt for _purpose, prompt, _reply in sent.calls}
    assert not prompts & {
        str(value) for span in telemetry.spans for value in span.attributes.values()
    }


def test_a_round_keeps_no_prompt_when_no_observer_asks_for_content(support, tmp_path):
    finished: list[FinishedRound] = []
    observability.add_observer(finished.append)
    try:
        run_round(support, tmp_path, Telemetry(content=False))
    finally:
        observability.remove_observer(finished.append)
    assert [len(round_.exchanges) for round_ in finished] == [0]


def stored_trace(tmp_path: Path) -> list[dict[str, Any]]:
    with open_store(str(tmp_path / "state.sqlite")) as store:
        [session] = store.sessions()
        [record] = store.rounds(session.id)
    return [dict(event) for event in record.trace]


def test_the_stored_trace_is_the_same_whether_content_is_captured_or_not(support, tmp_path):
    shapes = {}
    for content in (False, True):
        folder = tmp_path / str(content)
        folder.mkdir()
        telemetry, sent = Telemetry(content=content), Sent(support)
        run_round(support, folder, telemetry, client=sent.client)
        trace = stored_trace(folder)
        shapes[content] = Counter((event["event"], tuple(sorted(event))) for event in trace)
        stored = json.dumps(trace, ensure_ascii=False)
        assert not [prompt for _purpose, prompt, _reply in sent.calls if prompt in stored]
    assert shapes[True] == shapes[False]


def test_a_credential_in_the_message_never_reaches_a_span(support, tmp_path):
    telemetry = Telemetry(content=True)
    run_round(support, tmp_path, telemetry, f"My api key is {KEY}: is the KW-620 quiet?")
    everything = [str(value) for span in telemetry.spans for value in span.attributes.values()]
    assert not [text for text in everything if KEY in text]
    [answer] = [
        span for span in telemetry.named("chat ") if span.attributes["runner.purpose"] == "answer"
    ]
    [asked] = said_on(answer, "gen_ai.input.messages")
    assert "[redacted]" in asked["parts"][0]["content"]


def test_a_credential_in_an_error_never_reaches_a_span_even_not_opted_in(support, tmp_path):
    script = tmp_path / "script.yaml"  # the gatekeeper's call finds no rule: its error quotes
    script.write_text("- {purpose: suitability, reply: {troubleshooter: false}}\n", "utf-8")
    telemetry = Telemetry(content=False)
    message = f"My api key is {KEY}: is the KW-620 quiet?"
    result = run_round(support, tmp_path, telemetry, message, llm_script=script)
    assert KEY in str(result.error)  # the task, as the scripted LLM's miss quotes it
    failed = [span for span in telemetry.spans if span.status.status_code.name == "ERROR"]
    assert len(failed) == 2  # the round and the call
    for span in failed:  # not opted in: no error text at all (it quoted the user's message)
        assert KEY not in str(span.status.description)
        assert "My api key" not in str(span.status.description)


def test_opted_in_an_errors_text_reaches_the_span_with_credentials_hidden(support, tmp_path):
    script = tmp_path / "script.yaml"
    script.write_text("- {purpose: suitability, reply: {troubleshooter: false}}\n", "utf-8")
    telemetry = Telemetry(content=True)
    message = f"My api key is {KEY}: is the KW-620 quiet?"
    run_round(support, tmp_path, telemetry, message, llm_script=script)
    failed = [span for span in telemetry.spans if span.status.status_code.name == "ERROR"]
    assert len(failed) == 2
    for span in failed:
        assert KEY not in str(span.status.description)
        assert "[redacted]" in str(span.status.description)
