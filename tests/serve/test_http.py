"""The HTTP API through real HTTP: `runner serve` on a free port, httpx and the `openai` client.

One server (shop and desk pipelines, SQLite sessions, a bearer token) serves the module."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import httpx
import pytest

from runner.trace import schema_problems

from .conftest import ASK, COMPARE, QUESTION, Held, copy_pipelines
from .server import ServeProcess

TOKEN = "test-token"


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    return copy_pipelines(tmp_path_factory.mktemp("served"))


@pytest.fixture(scope="module")
def server(folder):
    process = ServeProcess(
        [folder],
        "--allow-python",
        "--lock-wait",
        "1",
        "--max-message-chars",
        "300",
        "--max-body-bytes",
        "2000",
        "--body-timeout",
        "1",
        env={"RUNNER_SERVE_TOKENS": f"other,{TOKEN}"},
    ).wait_ready()
    yield process
    assert process.stop() in (0, -15), process.output
    assert "Traceback" not in process.output, process.output


@pytest.fixture
def http(server):
    with httpx.Client(
        base_url=server.url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30
    ) as client:
        yield client


def post_round(http, domain="shop", **body):
    return http.post(f"/v1/pipelines/{domain}/rounds", json=body)


# --- the native API ---------------------------------------------------------------------------


def test_a_round_answers_with_the_run_json_result(http):
    response = post_round(http, message=COMPARE)
    assert response.status_code == 200
    result = response.json()
    assert schema_problems("result", result, "result") == []
    assert result["answer"] == "The KD-450 costs 100 EUR more than the KW-620."


def test_c24_a_question_is_a_200_and_the_answer_continues_the_session(http):
    asked = post_round(http, message=ASK)
    assert asked.status_code == 200
    assert (asked.json()["outcome"], asked.json()["question"]) == ("clarification", QUESTION)
    session = asked.json()["session"]
    answered = post_round(http, message="the kw-620", session_id=session).json()
    assert (answered["round"], answered["answer"]) == (2, "The KW-620 costs 449 EUR.")

    summary = http.get(f"/v1/sessions/{session}").json()
    assert [r["outcome"] for r in summary["rounds"]] == ["clarification", "answer"]
    stored = http.get(f"/v1/sessions/{session}/rounds/2").json()
    assert stored["result"] == answered
    assert stored["trace"][-1]["event"] == "round.end"


def test_pipelines_lists_the_domains_and_their_tools(http):
    domains = {p["domain"]: p for p in http.get("/v1/pipelines").json()["pipelines"]}
    assert set(domains) == {"shop", "desk"}
    assert [t["name"] for t in domains["desk"]["tools"]] == ["first", "second"]


def test_an_idempotency_key_re_sent_returns_the_stored_result(http):
    headers = {"Idempotency-Key": "http-once"}
    first = http.post("/v1/pipelines/shop/rounds", json={"message": ASK}, headers=headers)
    again = http.post("/v1/pipelines/shop/rounds", json={"message": ASK}, headers=headers)
    assert again.json() == first.json()
    session = first.json()["session"]
    assert len(http.get(f"/v1/sessions/{session}").json()["rounds"]) == 1


def test_errors_are_json_with_the_cli_message(http):
    missing = http.get("/v1/sessions/nope")
    assert missing.status_code == 404
    assert missing.json()["error"]["message"].startswith("no session 'nope'")
    unknown = post_round(http, "nope", message="hi")
    assert unknown.status_code == 404
    assert "domains: desk, shop" in unknown.json()["error"]["message"]
    assert http.get("/v1/nothing-here").json()["error"]["type"] == "not_found_error"


def test_limits_refuse_a_long_message_and_a_large_body(http):
    long = post_round(http, message="x" * 301)
    assert long.status_code == 400
    assert "more than this service's limit of 300" in long.json()["error"]["message"]
    large = post_round(http, message="x" * 250, padding="y" * 3000)
    assert large.status_code == 413
    broken = http.post(
        "/v1/pipelines/shop/rounds",
        content=b"{not json",
        headers={"Content-Type": "application/json"},
    )
    assert broken.status_code == 400
    assert "not JSON" in broken.json()["error"]["message"]


def test_a_request_needs_a_token_the_service_accepts(server):
    assert httpx.get(f"{server.url}/v1/pipelines").status_code == 401
    wrong = httpx.get(f"{server.url}/v1/pipelines", headers={"Authorization": "Bearer x"})
    assert wrong.status_code == 401
    assert wrong.json()["error"]["type"] == "authentication_error"
    other = httpx.get(f"{server.url}/v1/pipelines", headers={"Authorization": "Bearer other"})
    assert other.status_code == 200


def test_health_and_readiness_need_no_token(server):
    assert httpx.get(f"{server.url}/healthz").json() == {"status": "ok"}
    ready = httpx.get(f"{server.url}/readyz")
    assert ready.status_code == 200
    assert ready.json()["pipelines"] == ["desk", "shop"]
    assert ready.json()["store"] == "ok"


def test_metrics_count_rounds_by_outcome_and_llm_calls_by_purpose(http):
    post_round(http, message=COMPARE)
    text = http.get("/metrics").text
    assert 'runner_rounds_total{domain="shop",outcome="answer"}' in text
    assert 'runner_llm_calls_total{domain="shop",outcome="ok",purpose="decompose"}' in text
    assert "runner_round_seconds_bucket" in text
    assert "runner_llm_call_seconds_bucket" in text


def test_a_second_request_on_a_busy_session_waits_then_gets_409(http, folder):
    first = post_round(http, "desk", message="warm up").json()
    session = first["session"]
    with Held(folder) as held:
        results: list[httpx.Response] = []
        thread = threading.Thread(
            target=lambda: results.append(
                post_round(http, "desk", message="slow", session_id=session)
            )
        )
        thread.start()
        held.wait_until_held()
        busy = post_round(http, "desk", message="meanwhile", session_id=session)
    thread.join(30)
    assert busy.status_code == 409
    assert f"session {session!r} is busy with another request" in busy.json()["error"]["message"]
    assert results[0].status_code == 200 and results[0].json()["round"] == 2


def raw_request(server, body_start: bytes, length: int = 100) -> socket.socket:
    """A POST whose headers promise `length` bytes of JSON, of which only `body_start` is sent."""
    connection = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    head = (
        "POST /v1/pipelines/shop/rounds HTTP/1.1\r\n"
        f"Host: 127.0.0.1:{server.port}\r\nAuthorization: Bearer {TOKEN}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {length}\r\n\r\n"
    )
    connection.sendall(head.encode() + body_start)
    return connection


def test_issue_19_m5_a_body_that_does_not_arrive_in_time_is_a_408_and_closed(server):
    with raw_request(server, b'{"message": "') as connection:
        started = time.monotonic()
        answer = connection.recv(4096)
        assert answer.startswith(b"HTTP/1.1 408")
        assert time.monotonic() - started < 5


def test_issue_19_m5_a_body_left_halfway_is_one_line_in_the_log(server):
    raw_request(server, b'{"message": "').close()
    deadline = time.monotonic() + 5
    while "left while sending" not in server.output and time.monotonic() < deadline:
        time.sleep(0.05)
    lines = [line for line in server.output.splitlines() if "left while sending" in line]
    assert len(lines) == 1
    assert "Traceback" not in server.output


def test_issue_19_m5_a_stream_left_by_its_client_finishes_and_is_stored(http, server, folder):
    body = {
        "model": "desk",
        "messages": [{"role": "user", "content": "left behind"}],
        "stream": True,
        "user": "leaver",
    }
    with Held(folder) as held, httpx.Client(base_url=server.url, timeout=30) as leaving:
        request = leaving.build_request(
            "POST",
            "/v1/chat/completions",
            json=body,
            headers={"Authorization": f"Bearer {TOKEN}"},
        )
        response = leaving.send(request, stream=True)
        held.wait_until_held()
        response.close()  # the client leaves while the round runs
        time.sleep(0.2)
        # its round goes on, and counts against --max-rounds-in-flight until it ends
        assert httpx.get(f"{server.url}/readyz").json()["rounds_in_flight"] == 1
    # the client's scope, keyed with the store's secret (issue 31, finding 9): from its own
    # session of another user name
    probe = http.post("/v1/chat/completions", json={**body, "stream": False, "user": "probe"})
    scope = probe.headers["X-Runner-Session"].removesuffix("-u-probe")
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        stored = http.get(f"/v1/sessions/{scope}-u-leaver")
        if stored.status_code == 200 and stored.json()["rounds"]:
            break
        time.sleep(0.05)
    assert stored.json()["rounds"][0]["message"] == "left behind"


# --- the OpenAI-compatible API ------------------------------------------------------------------


@pytest.fixture
def openai_client(server):
    from openai import OpenAI

    return OpenAI(base_url=f"{server.url}/v1", api_key=TOKEN, max_retries=0)


def test_models_are_the_domains(openai_client):
    assert sorted(model.id for model in openai_client.models.list()) == ["desk", "shop"]


def test_a_chat_completion_answers_with_its_sources_at_the_end(openai_client):
    reply = openai_client.chat.completions.create(
        model="shop", messages=[{"role": "user", "content": COMPARE}]
    )
    content = reply.choices[0].message.content
    assert content.startswith("The KD-450 costs 100 EUR more than the KW-620.")
    assert content.endswith("[1] products.csv, KD-450\n[2] products.csv, KW-620")
    extra = reply.model_extra["runner"]
    assert extra["outcome"] == "answer"
    assert {"document": "products.csv", "heading": "KD-450"} in extra["sources"]


def test_the_session_header_carries_a_conversation_with_its_question(openai_client):
    asked = openai_client.chat.completions.with_raw_response.create(
        model="shop", messages=[{"role": "user", "content": ASK}]
    )
    session = asked.headers["X-Runner-Session"]
    assert asked.parse().choices[0].message.content == QUESTION
    answered = openai_client.chat.completions.create(
        model="shop",
        messages=[
            {"role": "user", "content": ASK},
            {"role": "assistant", "content": QUESTION},
            {"role": "user", "content": "the kw-620"},
        ],
        extra_headers={"X-Runner-Session": session},
    )
    assert answered.choices[0].message.content.startswith("The KW-620 costs 449 EUR.")
    assert answered.model_extra["runner"]["round"] == 2


def test_the_user_field_names_the_session_when_no_header_does(openai_client):
    user = "user-7"
    openai_client.chat.completions.create(
        model="shop", messages=[{"role": "user", "content": ASK}], user=user
    )
    answered = openai_client.chat.completions.create(
        model="shop", messages=[{"role": "user", "content": "kw-620"}], user=user
    )
    # the user's session, inside the client's own namespace (issue 19, M1)
    assert answered.model_extra["runner"]["session"].endswith(f"-u-{user}")
    assert answered.model_extra["runner"]["round"] == 2


def test_a_streamed_completion_sends_the_same_answer_as_events(openai_client):
    whole = openai_client.chat.completions.create(
        model="shop", messages=[{"role": "user", "content": COMPARE}]
    )
    stream = openai_client.chat.completions.create(
        model="shop", messages=[{"role": "user", "content": COMPARE}], stream=True
    )
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks)
    assert text == whole.choices[0].message.content
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert chunks[-1].model_extra["runner"]["outcome"] == "answer"


def test_an_unknown_model_is_a_404_the_client_raises(openai_client):
    import openai

    with pytest.raises(openai.NotFoundError, match="no pipeline 'gpt-4'"):
        openai_client.chat.completions.create(
            model="gpt-4", messages=[{"role": "user", "content": "hi"}]
        )


def test_a_request_id_and_an_idempotency_key_that_differ_are_refused(http):
    response = http.post(
        "/v1/pipelines/shop/rounds",
        json={"message": ASK, "request_id": "a"},
        headers={"Idempotency-Key": "b"},
    )
    assert response.status_code == 400
    assert "differ" in response.json()["error"]["message"]
