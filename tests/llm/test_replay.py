from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from runner.config.model import LLMConfig, ScriptRule
from runner.llm import CassetteError, CassetteMissError, build_client
from runner.llm.cassette import prompt_hash
from runner.llm.client import ProviderClient
from runner.llm.types import LLMRequest, Purpose

from .helpers import run


def record(cassette: Path, *requests: LLMRequest) -> list[str]:
    rules = (
        ScriptRule(reply="first answer", times=1),
        ScriptRule(reply={"found": True, "answer": "page says yes"}, purpose="read_page"),
        ScriptRule(reply="later answer"),
    )
    client = build_client(LLMConfig(provider="scripted", script=rules), record=cassette, environ={})
    return [run(client.complete(r)).text for r in requests]


def replay(cassette: Path) -> ProviderClient:
    return build_client(LLMConfig(provider="replay", cassette=cassette), environ={})


ANSWER = LLMRequest(Purpose.ANSWER, "Question: how long?\nContext: ten hours\nAnswer:")
PAGE = LLMRequest(Purpose.READ_PAGE, "Page one text", tool="search", schema={"type": "object"})


def test_recording_writes_every_request_to_a_readable_cassette(tmp_path: Path) -> None:
    cassette = tmp_path / "run.cassette.yaml"
    record(cassette, ANSWER, PAGE)
    document = yaml.safe_load(cassette.read_text(encoding="utf-8"))
    assert document["version"] == 1
    assert [(c["purpose"], c["tool"], c["prompt_hash"]) for c in document["calls"]] == [
        ("answer", None, prompt_hash(ANSWER.prompt)),
        ("read_page", "search", prompt_hash(PAGE.prompt)),
    ]
    assert "prompt: |" in cassette.read_text(encoding="utf-8")  # multi-line prompts as blocks


def test_replay_answers_by_prompt_hash_in_recorded_order(tmp_path: Path) -> None:
    cassette = tmp_path / "c.yaml"
    recorded = record(cassette, ANSWER, PAGE, ANSWER)
    client = replay(cassette)
    replayed = [run(client.complete(r)).text for r in (ANSWER, PAGE, ANSWER, ANSWER)]
    assert replayed == [*recorded, recorded[2]]
    assert run(client.complete(PAGE)).data == {"found": True, "answer": "page says yes"}


def test_a_replay_miss_shows_a_diff_against_the_nearest_recorded_prompt(tmp_path: Path) -> None:
    cassette = tmp_path / "c.yaml"
    record(cassette, ANSWER, PAGE)
    changed = LLMRequest(Purpose.ANSWER, "Question: how long?\nContext: ten hours\nReply:")
    with pytest.raises(CassetteMissError) as caught:
        run(replay(cassette).complete(changed))
    message = str(caught.value)
    assert "--- recorded prompt" in message and "+++ prompt now" in message
    assert "-Answer:" in message and "+Reply:" in message
    assert "re-record" in message


def test_a_replay_miss_without_any_prompt_of_that_purpose_says_so(tmp_path: Path) -> None:
    cassette = tmp_path / "c.yaml"
    record(cassette, ANSWER)
    with pytest.raises(CassetteMissError, match="no compose prompt at all"):
        run(replay(cassette).complete(LLMRequest(Purpose.COMPOSE, "x")))


def test_a_missing_cassette_says_how_to_record_one(tmp_path: Path) -> None:
    with pytest.raises(CassetteError, match="--record"):
        replay(tmp_path / "absent.yaml")
