"""Issue 19: the service is safe to share. Each finding's request, as the review sent it, to the
app `runner serve` builds (in process, with Starlette's TestClient): two clients A and B, the
shop and desk pipelines, SQLite sessions. docs/security.md says what these guarantee."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from runner.cli.webapp import compose
from runner.service.pipelines import Service, ServiceLimits
from runner.sessions import RoundRecord

from .conftest import ASK, COMPARE, copy_pipelines

A, B = "token-a", "token-b"
LOCAL = "http://127.0.0.1"


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_pipelines(tmp_path_factory.mktemp("secure"))


@pytest.fixture(scope="module")
def service(folder: Path) -> Iterator[Service]:
    opened = Service.open([folder], allow_python=True, limits=ServiceLimits(lock_wait_s=1))
    yield opened
    opened.close()


@pytest.fixture(scope="module")
def app(service: Service) -> Starlette:
    return compose(service, tokens=(A, B), playground=False, close_service=False)


def client(app: Starlette, token: str | None = A, **headers: str) -> TestClient:
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    return TestClient(app, base_url=LOCAL, headers=headers, follow_redirects=False)


def say(http: TestClient, domain: str = "shop", **body: object) -> httpx.Response:
    return http.post(f"/v1/pipelines/{domain}/rounds", json=body)


def chat(http: TestClient, message: str, **body: object) -> httpx.Response:
    messages = [{"role": "user", "content": message}]
    return http.post("/v1/chat/completions", json={"model": "shop", "messages": messages, **body})


def sessions(service: Service) -> set[str]:
    return {info.id for info in service.stores["shop"].sessions()}


# --- H2: hosts and origins --------------------------------------------------------------------


def test_h2_a_foreign_host_is_refused(app: Starlette) -> None:
    rebound = client(app, Host="rebind.attacker.example")
    assert rebound.get("/v1/pipelines").status_code == 400
    assert rebound.get("/healthz").status_code == 400
    assert client(app).get("/v1/pipelines").status_code == 200


def test_h2_a_cross_site_simple_post_runs_no_round(app: Starlette, service: Service) -> None:
    before = sessions(service)
    response = client(app).post(
        "/v1/pipelines/shop/rounds",
        content=json.dumps({"message": COMPARE}),
        headers={"Content-Type": "text/plain", "Origin": "http://evil.example"},
    )
    assert response.status_code == 415
    assert "application/json" in response.json()["error"]["message"]
    assert sessions(service) == before


# --- M1: sessions belong to their client --------------------------------------------------------


def test_m1_another_client_cannot_read_or_continue_a_session(app: Starlette) -> None:
    asked = say(client(app, A), message=ASK).json()
    session = asked["session"]
    b = client(app, B)
    for response in (
        b.get(f"/v1/sessions/{session}"),
        b.get(f"/v1/sessions/{session}/rounds/1"),
        say(b, message="the kw-620", session_id=session),
    ):
        assert response.status_code == 404
        assert ASK not in response.text
    assert client(app, A).get(f"/v1/sessions/{session}").status_code == 200


def test_m1_the_user_field_names_a_session_of_the_client_only(app: Starlette) -> None:
    a, b = client(app, A), client(app, B)
    first = chat(a, ASK, user="alice@example.com")
    session = first.headers["X-Runner-Session"]
    assert b.get(f"/v1/sessions/{session}").status_code == 404
    other = chat(b, "the kw-620", user="alice@example.com").json()["runner"]
    assert other["session"] != session and other["round"] == 1
    assert chat(a, "the kw-620", user="alice@example.com").json()["runner"]["round"] == 2


def test_m1_an_unknown_session_id_is_a_404_and_creates_nothing(
    app: Starlette, service: Service
) -> None:
    before = sessions(service)
    response = say(client(app), message=COMPARE, session_id="chosen-by-client")
    assert response.status_code == 404
    named = client(app).post(
        "/v1/chat/completions",
        json={"model": "shop", "messages": [{"role": "user", "content": COMPARE}]},
        headers={"X-Runner-Session": "chosen-by-client"},
    )
    assert named.status_code == 404
    assert sessions(service) == before


# --- M2: idempotency keys belong to their client and pipeline ----------------------------------


def test_m2_an_idempotency_key_of_another_client_is_another_request(app: Starlette) -> None:
    key = {"Idempotency-Key": "shared-key"}
    secret = "What does it cost? (alice@example.com)"
    first = client(app, A).post("/v1/pipelines/shop/rounds", json={"message": secret}, headers=key)
    other_message = client(app, B).post(
        "/v1/pipelines/shop/rounds", json={"message": COMPARE}, headers=key
    )
    assert other_message.status_code == 200
    assert "alice" not in other_message.text and first.json()["session"] not in other_message.text
    again = {"Idempotency-Key": "second-key"}
    mine = client(app, A).post("/v1/pipelines/shop/rounds", json={"message": ASK}, headers=again)
    same_message = client(app, B).post(
        "/v1/pipelines/shop/rounds", json={"message": ASK}, headers=again
    )
    assert same_message.json()["session"] != mine.json()["session"]


def test_m2_an_idempotency_key_is_scoped_by_pipeline(app: Starlette) -> None:
    key = {"Idempotency-Key": "per-pipeline"}
    a = client(app, A)
    shop = a.post("/v1/pipelines/shop/rounds", json={"message": "quick one"}, headers=key)
    desk = a.post("/v1/pipelines/desk/rounds", json={"message": "quick one"}, headers=key)
    assert shop.status_code == desk.status_code == 200
    assert shop.json()["session"] != desk.json()["session"]


# --- M3: a long session is read a window at a time ----------------------------------------------


def test_m3_a_session_is_read_a_window_of_rounds_at_a_time(
    app: Starlette, service: Service
) -> None:
    a = client(app, A)
    session = say(a, message=COMPARE).json()["session"]
    for _ in range(6):
        say(a, message=COMPARE, session_id=session)
    newest = a.get(f"/v1/sessions/{session}", params={"limit": 3}).json()
    assert [r["round"] for r in newest["rounds"]] == [5, 6, 7]
    assert (newest["rounds_total"], newest["earlier"]) == (7, 5)
    page = a.get(f"/v1/sessions/{session}", params={"limit": 3, "before": 5}).json()
    assert [r["round"] for r in page["rounds"]] == [2, 3, 4]


# --- M5: bounded work -------------------------------------------------------------------------


def test_m5_rounds_past_the_cap_are_a_503_with_retry_after(
    app: Starlette, service: Service
) -> None:
    service._in_flight = service.limits.max_rounds_in_flight  # the worker is full
    try:
        response = say(client(app), message=COMPARE)
    finally:
        service._in_flight = 0
    assert response.status_code == 503 and response.headers["Retry-After"] == "2"


# --- L2, L3: nothing leaks, every malformed request is a 4xx ------------------------------------


def test_l2_an_llm_servers_error_body_is_shown_without_its_credentials(
    app: Starlette, service: Service
) -> None:
    session = say(client(app, A), message=COMPARE).json()["session"]
    store = service.stores["shop"]
    state, version = store.load(session)
    echoed = (
        'HTTP 401 from the LLM server: {"error": "bad key", "auth": "Bearer sk-live-1234567890"}'
    )
    record = RoundRecord(2, "again", "error", {"outcome": "error", "error": echoed}, [])
    store.save(state, version, round_record=record)
    shown = client(app, A).get(f"/v1/sessions/{session}/rounds/2").text
    assert "sk-live-1234567890" not in shown and "[redacted]" in shown


def test_l3_no_error_names_a_path_of_the_machine(app: Starlette, folder: Path) -> None:
    missing = client(app).get("/v1/sessions/nope")
    assert missing.status_code == 404
    assert str(folder) not in missing.text and ".runner/state.sqlite" not in missing.text


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("[" * 100_000 + "]" * 100_000, "nests JSON too deeply"),
        (
            json.dumps(
                {
                    "model": "shop",
                    "messages": [{"role": "user", "content": [{"type": "text", "text": 7}]}],
                }
            ),
            "must be text",
        ),
    ],
)
def test_l3_a_malformed_body_is_a_400_with_a_message(
    app: Starlette, body: str, expected: str
) -> None:
    response = client(app).post(
        "/v1/chat/completions", content=body, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 400 and expected in response.json()["error"]["message"]


def test_l3_a_non_ascii_token_is_a_401(app: Starlette) -> None:
    response = client(app, None).get(
        "/v1/pipelines", headers={"Authorization": "Bearer tökén".encode()}
    )
    assert response.status_code == 401


def test_l3_a_user_with_a_line_break_is_a_400_and_stores_nothing(
    app: Starlette, service: Service
) -> None:
    before = sessions(service)
    response = chat(client(app), COMPARE, user="eve\r\nSet-Cookie: x=1")
    assert response.status_code == 400 and "`user`" in response.json()["error"]["message"]
    assert sessions(service) == before
    for user in ("josé", "x" * 200):
        named = chat(client(app), COMPARE, user=user)
        assert named.status_code == 200 and named.headers["X-Runner-Session"].isascii()


# --- L4: security headers -----------------------------------------------------------------------


def test_l4_every_response_carries_the_security_headers(app: Starlette) -> None:
    for response in (client(app).get("/healthz"), client(app, None).get("/v1/pipelines")):
        policy = response.headers["Content-Security-Policy"]
        assert "frame-ancestors 'none'" in policy and "script-src 'self';" in policy
        assert response.headers["X-Content-Type-Options"] == "nosniff"
        assert response.headers["Referrer-Policy"] == "no-referrer"
        # browsers that predate frame-ancestors read this one: no page of runner in a frame
        assert response.headers["X-Frame-Options"] == "DENY"


def test_session_ttl_prunes_idle_sessions(service: Service) -> None:
    result = asyncio.run(service.run_round("shop", COMPARE))
    assert asyncio.run(service.prune(3600)) == 0
    assert asyncio.run(service.prune(0)) >= 1
    assert result["session"] not in sessions(service)


def test_h2_the_names_answered_are_the_bound_address_loopback_and_the_allowed_ones() -> None:
    from runner.serve.hosts import allowed_hosts

    names = allowed_hosts("10.0.0.5", ["runner.example.com"])
    assert {"10.0.0.5", "runner.example.com", "127.0.0.1", "localhost"} <= set(names)
    assert "rebind.attacker.example" not in names
    assert "*" not in allowed_hosts("0.0.0.0")


def test_h2_an_allowed_host_is_answered(service: Service) -> None:
    app = compose(
        service,
        tokens=(A,),
        playground=False,
        close_service=False,
        allowed=["runner.example.com"],
    )
    named = TestClient(app, base_url="http://runner.example.com")
    assert named.get("/healthz").status_code == 200
