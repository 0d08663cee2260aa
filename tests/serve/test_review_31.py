"""Issue 31: the second security review. Each finding's request, as the review sent it, to the
app `runner serve --playground` builds (in process, Starlette's TestClient): tokens A and B,
the shop pipeline and a copy of it whose `domain` is `login`. The findings about connections
(slow bodies, idle streams, slots) are in test_connections.py, against a real uvicorn; the
ways out of a credential in test_ways_out.py; the browser's in tests/playground."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from runner.cli.webapp import compose
from runner.service.pipelines import Service, ServiceLimits

from .conftest import SHOP

A, B = "token-a", "token-b"
LOCAL = "http://127.0.0.1"


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("review31")
    shutil.copytree(SHOP, folder / "shop")
    shutil.copytree(SHOP, folder / "login")
    login = folder / "login" / "shop.yaml"
    login.write_text(
        login.read_text(encoding="utf-8").replace("domain: shop", "domain: login"), "utf-8"
    )
    return folder


@pytest.fixture(scope="module")
def service(folder: Path) -> Iterator[Service]:
    opened = Service.open([folder], limits=ServiceLimits(lock_wait_s=1))
    yield opened
    opened.close()


@pytest.fixture(scope="module")
def app(service: Service) -> Starlette:
    return compose(service, tokens=(A, B), playground=True, close_service=False)


def client(app: Starlette, token: str | None = A, **headers: str) -> TestClient:
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    return TestClient(app, base_url=LOCAL, headers=headers, follow_redirects=False)


def chat(http: TestClient, **body: object) -> httpx.Response:
    messages = body.pop("messages", [{"role": "user", "content": "What does it cost?"}])
    return http.post("/v1/chat/completions", json={"model": "shop", "messages": messages, **body})


# --- finding 3: routes are matched, not prefixed ----------------------------------------------


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/playground/login/"),
        ("POST", "/playground/login/say"),
        ("POST", "/playground/login/say/stream"),
        ("GET", "/playground/login/health"),
        ("GET", "/playground/login/source?document=x"),
        ("GET", "/playground/login/evals/"),
        ("GET", "/playground/static/../login/"),
    ],
)
def test_f3_a_pipeline_named_login_makes_no_page_public(
    app: Starlette, method: str, path: str
) -> None:
    response = client(app, None).request(method, path, data={"message": "hi"})
    assert response.status_code in (303, 401, 404), response.text[:200]
    if response.status_code == 303:
        assert response.headers["location"] == "/playground/login"


def test_f3_the_login_page_and_the_static_files_stay_public(app: Starlette) -> None:
    anonymous = client(app, None)
    assert anonymous.get("/playground/login").status_code == 200
    assert anonymous.get("/playground/static/playground.css").status_code == 200


def test_f3_with_a_token_the_login_pipelines_chat_is_served(app: Starlette) -> None:
    assert client(app, A).get("/playground/login/").status_code == 200


def test_f3_a_pipeline_named_static_is_refused_with_its_file(tmp_path: Path) -> None:
    from runner.playground.serving import ServeError, playground_routes

    shutil.copytree(SHOP, tmp_path / "static")
    pipeline = tmp_path / "static" / "shop.yaml"
    pipeline.write_text(
        pipeline.read_text(encoding="utf-8").replace("domain: shop", "domain: static"), "utf-8"
    )
    opened = Service.open([pipeline])
    try:
        with pytest.raises(ServeError, match=r"shop\.yaml: domain 'static'.*another `domain`"):
            playground_routes(opened, (A,), secret=b"s")
    finally:
        opened.close()


# --- finding 10: every malformed input is a 4xx; a failing stream ends with an error event ------

LONE = '"\\ud800"'  # valid JSON, no UTF-8 text


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/pipelines/shop/rounds", f'{{"message": {LONE}}}'),
        ("/v1/pipelines/shop/rounds", f'{{"message": "hi", "request_id": {LONE}}}'),
        ("/v1/pipelines/shop/rounds/stream", f'{{"message": {LONE}}}'),
        (
            "/v1/chat/completions",
            f'{{"model": "shop", "messages": [{{"role": "user", "content": {LONE}}}]}}',
        ),
        (
            "/v1/chat/completions",
            f'{{"model": "shop", "messages": [{{"role": "user", "content": "hi"}}], '
            f'"user": {LONE}}}',
        ),
    ],
)
def test_f10_a_lone_surrogate_is_a_400(app: Starlette, path: str, body: str) -> None:
    response = client(app).post(path, content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 400, response.text
    assert "lone surrogate" in response.json()["error"]["message"]


def test_f10_a_stream_that_fails_on_the_way_ends_with_an_error_event() -> None:
    from starlette.routing import Route

    from runner.serve.streaming import sse_response
    from runner.service.streams import sse

    async def events():  # type: ignore[no-untyped-def]
        yield sse({"event": "task.start"}, "progress")
        raise RuntimeError("broke mid-stream")

    broken = Starlette(routes=[Route("/s", lambda _r: sse_response(events()))])
    text = TestClient(broken).get("/s").text
    assert text.startswith("event: progress")
    last = text.strip().split("\n\n")[-1]
    assert last.startswith("event: error") and "broke mid-stream" in last


def test_f10_a_progress_event_with_a_lone_surrogate_is_sent_escaped() -> None:
    from runner.service.streams import sse

    sent = sse({"query": "\ud800"}, "progress")
    sent.encode("utf-8")
    assert json.loads(sent.split("data: ", 1)[1]) == {"query": "\ud800"}


# --- finding 9: session ids are never derived from a token alone ------------------------------


def test_f9_a_session_id_gives_nothing_to_guess_the_token_from(app: Starlette) -> None:
    import hashlib

    reply = client(app, A).post("/v1/pipelines/shop/rounds", json={"message": "What does it cost?"})
    session = reply.json()["session"]
    assert not session.startswith(hashlib.sha256(A.encode()).hexdigest()[:12])
    assert session.startswith(
        client(app, A)
        .post(  # the same client's sessions share a scope
            "/v1/pipelines/shop/rounds", json={"message": "What does it cost?"}
        )
        .json()["session"]
        .split("-")[0]
        + "-"
    )


def test_f9_the_key_is_the_stores_the_same_for_every_worker_and_restart(folder: Path) -> None:
    from runner.service.principals import Client

    keys = []
    for _ in range(2):  # two workers (or one restarted) opening the same store
        opened = Service.open([folder / "shop"])
        keys.append(opened.client_key())
        opened.close()
    assert keys[0] == keys[1] and len(keys[0]) == 32
    assert Client.for_token(A, keys[0]).scope != Client.for_token(A, b"another store").scope


def test_f4_a_body_that_arrived_in_time_is_read_though_the_route_reads_it_late() -> None:
    import asyncio

    from starlette.middleware import Middleware
    from starlette.requests import Request
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route

    from runner.serve.connections import BodyDeadline

    async def late_reader(request: Request) -> PlainTextResponse:
        await asyncio.sleep(0.3)  # past the deadline: the body is all there already
        return PlainTextResponse((await request.body()).decode())

    slow_start = Starlette(
        routes=[Route("/", late_reader, methods=["POST"])],
        middleware=[Middleware(BodyDeadline, timeout_s=0.1)],
    )
    response = TestClient(slow_start).post("/", content=b"all of it")
    assert (response.status_code, response.text) == (200, "all of it")


# --- finding 18, in process: the rule the browser tests drive --------------------------------


def playground_csrf(http: TestClient, path: str = "/playground/shop/") -> str:
    import re

    found = re.search(r'name="csrf" value="([^"]+)"', http.get(path).text)
    assert found is not None
    return found[1]


@pytest.mark.parametrize(
    ("headers", "right_token", "status"),
    [
        ({"Origin": "null"}, True, 303),  # a plain form under no-referrer: its token decides
        ({"Origin": "null"}, False, 403),
        ({"Origin": "null", "Sec-Fetch-Site": "cross-site"}, True, 403),
        ({"Origin": "http://evil.example"}, True, 403),
    ],
)
def test_f18_a_form_with_origin_null_is_taken_only_with_its_csrf_token(
    app: Starlette, headers: dict[str, str], right_token: bool, status: int
) -> None:
    http = client(app, A)
    token = playground_csrf(http) if right_token else "guess"
    response = http.post(
        "/playground/shop/say",
        data={"message": "What does it cost?", "csrf": token},
        headers=headers,
    )
    assert response.status_code == status, response.text[:300]


def test_f18_the_login_form_carries_a_csrf_token_and_needs_it_under_origin_null(
    app: Starlette,
) -> None:
    anonymous = client(app, None)
    token = playground_csrf(anonymous, "/playground/login")
    signed = anonymous.post(
        "/playground/login", data={"token": A, "csrf": token}, headers={"Origin": "null"}
    )
    assert signed.status_code == 303 and "runner_token" in signed.headers["set-cookie"]
    forged = client(app, None).post(
        "/playground/login", data={"token": A, "csrf": "guess"}, headers={"Origin": "null"}
    )
    assert forged.status_code == 403


# --- finding 16, through the page ---------------------------------------------------------------


def test_f16_an_edited_case_of_1500_turns_is_refused_by_the_save_form(
    app: Starlette, folder: Path
) -> None:
    http = client(app, A)
    session = http.post("/v1/pipelines/shop/rounds", json={"message": "What does it cost?"})
    keep_page = f"/playground/shop/sessions/{session.json()['session']}/keep"
    turns = "".join("    - message: hi\n" for _ in range(1_500))
    response = http.post(
        keep_page,
        data={"case": f"- name: long\n  turns:\n{turns}", "csrf": playground_csrf(http)},
    )
    assert response.status_code == 400 and "more than a kept case may (50)" in response.text
    assert not (folder / "shop" / "tests" / "playground.yaml").exists()
