"""`runner.playground.recording`: a real model's replies, recorded during the playground's
rounds, become a script that replays the conversation as a passing test with no model."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from runner.llm.providers.base import ProviderReply
from runner.llm.types import LLMRequest, Purpose
from runner.playground import keep
from runner.playground.health import run_case_file
from runner.playground.recording import RecordingProvider, ReplyLog, install, recording
from runner.service.pipelines import Service


class StandInModel:
    """A real model's stand-in: the offline provider, which writes a prompt tool's reply from
    its context only, plus a model's reply for a tool without context."""

    name = "offline"
    cacheable = False

    def __init__(self, offline: Any) -> None:
        self.offline = offline

    def prepare(self, settings: Any) -> None:
        self.offline.prepare(settings)

    async def generate(self, request: LLMRequest, settings: Any) -> ProviderReply:
        if request.purpose is Purpose.TOOL and not request.facts.get("context"):
            return ProviderReply("The KW-720X comes with a 3-year manufacturer's warranty.")
        return await self.offline.generate(request, settings)


@pytest.fixture
def recorded_service(support: Path) -> Iterator[Service]:
    """A service whose provider is recorded as a real model's would be."""
    service = Service.open([support])
    runtime = service.runtime("support")
    runtime.client.provider = RecordingProvider(StandInModel(runtime.client.provider))
    yield service
    service.close()


def run(
    service: Service, message: str, session: str | None = None
) -> tuple[dict[str, Any], list[keep.RecordedReply]]:
    with recording() as replies:
        result = asyncio.run(service.run_round("support", message, session_id=session))
    return result, replies


def test_every_reply_of_a_round_is_recorded_in_order(recorded_service: Service) -> None:
    result, replies = run(
        recorded_service, "My dishwasher shows E24 and the water stays at the bottom"
    )
    assert len(replies) == result["stats"]["llm_calls"]
    assert [r.purpose for r in replies] == ["suitability", "tool", "gatekeeper", "answer"]
    assert replies[1].tool == "troubleshooter" and replies[1].subject.startswith("My dishwasher")


def test_replies_outside_a_recorded_round_are_not_kept(recorded_service: Service) -> None:
    with recording() as replies:
        pass
    asyncio.run(recorded_service.run_round("support", "Compare the KD-450 and the KD-600X"))
    assert replies == []


def test_a_recorded_conversation_kept_as_a_script_passes_runner_test(
    recorded_service: Service, support: Path
) -> None:
    first, asked = run(recorded_service, "What warranty do I get on my washing machine?")
    _, answered = run(recorded_service, "It is a KW-720X", first["session"])
    rounds = [
        keep.KeptRound(r["message"], r["result"], r["trace"], replies)
        for r, replies in (
            (recorded_service.round(first["session"], 1), asked),
            (recorded_service.round(first["session"], 2), answered),
        )
    ]
    target = support.parent / "tests" / "kept-with-a-script.yaml"
    kept = keep.keep(rounds, pipeline_path=support, provider="openai_like", test_file=target)
    assert len(kept.case["llm"]["script"]) == len(asked) + len(answered)
    keep.save(kept)
    report = run_case_file(target)
    assert report.passed, report.text


def test_a_reproducible_provider_is_not_wrapped(service: Service) -> None:
    runtime = service.runtime("support")
    assert install(runtime) is False
    assert not isinstance(runtime.client.provider, RecordingProvider)


def test_the_reply_log_forgets_the_oldest_rounds_first() -> None:
    log = ReplyLog(limit=2)
    for number in (1, 2, 3):
        log.add("s", number, [])
    assert log.get("s", 1) is None and log.get("s", 3) == []


def test_the_playground_records_a_real_models_rounds_and_keeps_them_as_the_script(
    support: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from runner.playground import recording as recording_module
    from tests.playground.conftest import csrf_of, playground_client

    # the offline provider, treated as a real model: its replies must be recorded to be kept
    monkeypatch.setattr(recording_module, "REPRODUCIBLE", frozenset())
    monkeypatch.setattr(keep, "REPRODUCIBLE", frozenset())
    service = Service.open([support])
    try:
        client = playground_client(service)
        csrf = csrf_of(client)
        response = client.post(
            "/playground/support/say",
            data={"message": "Compare the KD-450 and the KD-600X", "csrf": csrf},
        )
        session = response.headers["location"].split("session=")[1].split("#")[0]
        saved = client.post(
            f"/playground/support/sessions/{session}/keep",
            data={"csrf": csrf},
            follow_redirects=True,
        )
        assert 'id="test-result" class="pass"' in saved.text, saved.text
        written = (support.parent / "tests" / "playground.yaml").read_text(encoding="utf-8")
        assert "purpose: decompose" in written and "times: 1" in written
    finally:
        service.close()


def test_an_answer_streamed_as_it_is_written_is_recorded_too() -> None:
    from runner.config.model import ModelSettings, ScriptRule
    from runner.llm.providers.scripted import ScriptedProvider, rules_from_config
    from runner.llm.types import LLMRequest, Purpose

    rule = ScriptRule(purpose="answer", reply="Ten hours, at most.")
    provider = RecordingProvider(ScriptedProvider(rules_from_config((rule,), "test")))
    request = LLMRequest(Purpose.ANSWER, "How long?", subject="battery", streams=True)
    pieces: list[str] = []
    with recording() as replies:
        reply = asyncio.run(provider.stream(request, ModelSettings(), pieces.append))
    assert len(pieces) > 1 and reply.text == "Ten hours, at most."
    assert [(r.purpose, r.reply) for r in replies] == [("answer", "Ten hours, at most.")]
