"""Answers streamed as they are written, through real HTTP: `runner serve` on a free port of
127.0.0.1, the official `openai` client and httpx reading server-sent events. The shop
pipeline's scripted LLM writes its answers a word at a time, as a model would."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from .conftest import ASK, COMPARE, Held, copy_pipelines
from .server import ServeProcess

TOKEN = "stream-token"


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    return copy_pipelines(tmp_path_factory.mktemp("streamed"))


@pytest.fixture(scope="module")
def server(folder):
    process = ServeProcess(
        [folder], "--allow-python", env={"RUNNER_SERVE_TOKENS": TOKEN}
    ).wait_ready()
    yield process
    assert process.stop() in (0, -15), process.output
    assert "Traceback" not in process.output, process.output


@pytest.fixture
def http(server) -> Iterator[httpx.Client]:
    with httpx.Client(
        base_url=server.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30
    ) as client:
        yield client


@pytest.fixture
def openai_client(server):
    from openai import OpenAI

    return OpenAI(base_url=f"{server.url}/v1", api_key=TOKEN, max_retries=0)


def events(lines: Iterator[str]) -> Iterator[tuple[str, object]]:
    """Server-sent events as (event, data) pairs; an event without a name is `message`."""
    name = "message"
    for line in lines:
        if line.startswith("event: "):
            name = line[len("event: ") :]
        elif line.startswith("data: "):
            yield name, json.loads(line[len("data: ") :])
            name = "message"


# --- the OpenAI-compatible API ------------------------------------------------------------------


def test_the_openai_client_gets_the_answer_in_several_deltas_before_the_end(openai_client):
    stream = openai_client.chat.completions.create(
        model="shop", messages=[{"role": "user", "content": ASK + " the KW-620"}], stream=True
    )
    chunks = list(stream)
    deltas = [c.choices[0].delta.content for c in chunks[:-1] if c.choices[0].delta.content]
    assert len(deltas) > 1
    assert deltas[0] == "The"
    assert chunks[-1].choices[0].finish_reason == "stop"


def test_the_streamed_text_is_the_whole_message_sources_listed_at_the_end(openai_client):
    whole = openai_client.chat.completions.create(
        model="shop", messages=[{"role": "user", "content": COMPARE}]
    )
    chunks = list(
        openai_client.chat.completions.create(
            model="shop", messages=[{"role": "user", "content": COMPARE}], stream=True
        )
    )
    text = "".join(c.choices[0].delta.content or "" for c in chunks)
    assert text == whole.choices[0].message.content
    assert "\n\nSources:\n" in text


def test_the_last_chunk_carries_the_result_and_its_sources(openai_client):
    chunks = list(
        openai_client.chat.completions.create(
            model="shop", messages=[{"role": "user", "content": COMPARE}], stream=True
        )
    )
    runner = chunks[-1].model_extra["runner"]
    assert runner["outcome"] == "answer"
    assert {source["document"] for source in runner["sources"]} == {"products.csv"}
    assert all("runner" not in c.model_extra for c in chunks[:-1])


# --- the native API's server-sent events --------------------------------------------------------


def stream_round(http, domain: str = "shop", **body) -> list[tuple[str, object]]:
    with http.stream("POST", f"/v1/pipelines/{domain}/rounds/stream", json=body) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        return list(events(response.iter_lines()))


def test_a_streamed_round_tells_its_progress_before_the_answer(http):
    told = stream_round(http, message=COMPARE)
    progress = [data["event"] for kind, data in told if kind == "progress"]
    assert progress[0] == "task.start"
    assert {"task.start", "task.end", "tool.run", "coordinator.run"} <= set(progress)
    first_delta = next(i for i, (kind, _) in enumerate(told) if kind == "delta")
    assert all(kind == "progress" for kind, _ in told[:first_delta])


def test_a_streamed_round_says_which_tool_ran_on_which_task_and_why(http):
    told = stream_round(http, message=COMPARE)
    ran = [data for kind, data in told if kind == "progress" and data["event"] == "tool.run"]
    assert {"task": "1.1.n", "tool": "specs", "reason": "forced"}.items() <= ran[0].items()
    answered = [data for kind, data in told if kind == "progress" and data["event"] == "terminal"]
    assert answered == [{"event": "terminal", "task": "1", "tool": "compare"}]


def test_the_deltas_join_to_the_answer_of_the_result_event(http):
    told = stream_round(http, message=COMPARE)
    deltas = [data["text"] for kind, data in told if kind == "delta"]
    kind, result = told[-1]
    assert kind == "result"
    assert len(deltas) > 1
    assert "".join(deltas) == result["answer"]


def test_a_question_comes_in_the_result_event_without_deltas(http):
    told = stream_round(http, message=ASK)
    assert not [data for kind, data in told if kind == "delta"]
    assert told[-1][0] == "result" and told[-1][1]["outcome"] == "clarification"


def test_an_unknown_pipeline_is_a_404_before_any_event(http):
    response = http.post("/v1/pipelines/nope/rounds/stream", json={"message": "hi"})
    assert response.status_code == 404
    assert "no pipeline 'nope'" in response.json()["error"]["message"]


def test_a_streamed_round_needs_the_token(server):
    response = httpx.post(f"{server.url}/v1/pipelines/shop/rounds/stream", json={"message": "hi"})
    assert response.status_code == 401


def test_a_client_that_leaves_mid_stream_leaves_the_round_to_finish_and_be_stored(http, folder):
    with (
        Held(folder) as held,
        http.stream(
            "POST",
            "/v1/pipelines/desk/rounds/stream",
            json={"message": "left early", "request_id": "leaver-1"},
        ) as response,
    ):
        first = next(events(response.iter_lines()))
        assert first[0] == "progress"
        held.wait_until_held()
        # the connection is closed; the round is still held
    stored = None
    deadline = time.monotonic() + 20
    while stored is None and time.monotonic() < deadline:  # the re-send waits for the round
        response = http.post(
            "/v1/pipelines/desk/rounds", json={"message": "left early", "request_id": "leaver-1"}
        )
        stored = response.json() if response.status_code == 200 else None
    assert stored is not None and stored["outcome"] == "answer"
    assert held.runs().count("second left early") == 1  # stored, not run again


def test_metrics_measure_the_time_to_the_first_token(http):
    stream_round(http, message=COMPARE)
    text = http.get("/metrics").text
    assert 'runner_time_to_first_token_seconds_count{domain="shop"}' in text
