"""Issue 31, findings 4, 5, 6, 13 and 15: bounded connections, against a real `runner serve`
(uvicorn) on 127.0.0.1 with `--body-timeout 1`, `--max-connections 4` and
`--max-rounds-in-flight 4`. A body that trickles in is answered 408 and its connection closed,
on every route that reads a body; `GET /mcp` holds nothing open; `/mcp` checks Origin with
tokens too; one client cannot take every round slot."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from .conftest import Held, copy_pipelines
from .server import ServeProcess

A, B = "conn-token-a", "conn-token-b"
BODY_TIMEOUT_S = 1.0


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_pipelines(tmp_path_factory.mktemp("connections"))


@pytest.fixture(scope="module")
def server(folder: Path) -> Iterator[ServeProcess]:
    process = ServeProcess(
        [folder],
        "--allow-python",
        "--mcp",
        "--playground",
        "--body-timeout",
        str(BODY_TIMEOUT_S),
        "--max-connections",
        "4",
        "--max-rounds-in-flight",
        "4",
        env={"RUNNER_SERVE_TOKENS": f"{A},{B}"},
    ).wait_ready()
    yield process
    process.stop()


def trickle(server: ServeProcess, path: str, content_type: str, token: str | None = A) -> dict:
    """A request whose body comes one byte every 0.2 s, for up to 6 s: what the server
    answered, and how long until it closed the connection while the bytes kept coming."""
    connection = socket.create_connection(("127.0.0.1", server.port), timeout=8)
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n{auth}"
        f"Content-Type: {content_type}\r\nAccept: application/json, text/event-stream\r\n"
        "Content-Length: 500\r\n\r\n"
    )
    connection.sendall(head.encode())
    started = time.monotonic()
    answer = bytearray()
    closed_after = None

    def read() -> None:
        nonlocal closed_after
        while True:
            try:
                data = connection.recv(4096)
            except OSError:
                data = b""
            if not data:
                closed_after = time.monotonic() - started
                return
            answer.extend(data)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    while closed_after is None and time.monotonic() - started < 6:
        try:
            connection.sendall(b"x")
        except OSError:
            break
        time.sleep(0.2)
    reader.join(3)
    connection.close()
    return {"answer": bytes(answer), "closed_after": closed_after}


@pytest.mark.parametrize(
    ("path", "content_type", "token"),
    [
        ("/v1/pipelines/shop/rounds", "application/json", A),  # finding 4
        ("/v1/chat/completions", "application/json", A),
        ("/mcp", "application/json", A),  # finding 5
        ("/playground/login", "application/x-www-form-urlencoded", None),  # needs no token
        ("/playground/shop/say", "application/x-www-form-urlencoded", A),
    ],
)
def test_f4_f5_a_trickling_body_is_a_408_and_its_connection_is_closed(
    server: ServeProcess, path: str, content_type: str, token: str | None
) -> None:
    seen = trickle(server, path, content_type, token)
    assert seen["answer"].startswith(b"HTTP/1.1 408"), seen["answer"][:200]
    assert seen["closed_after"] is not None and seen["closed_after"] < BODY_TIMEOUT_S + 2


def test_f4_slow_bodies_on_every_connection_slot_leave_the_service_answering(
    server: ServeProcess,
) -> None:
    results: list[dict] = []
    slow = [
        threading.Thread(
            target=lambda: results.append(
                trickle(server, "/v1/pipelines/shop/rounds", "application/json")
            )
        )
        for _ in range(4)
    ]
    for thread in slow:
        thread.start()
    for thread in slow:
        thread.join(15)
    assert len(results) == 4 and all(r["closed_after"] is not None for r in results)
    assert httpx.get(f"{server.url}/healthz", timeout=5).status_code == 200


def test_f6_get_mcp_is_a_405_that_holds_nothing_open(server: ServeProcess) -> None:
    started = time.monotonic()
    response = httpx.get(
        f"{server.url}/mcp",
        headers={"Authorization": f"Bearer {A}", "Accept": "text/event-stream"},
        timeout=5,
    )
    assert response.status_code == 405 and response.headers["allow"] == "POST"
    assert time.monotonic() - started < 2


def test_f13_mcp_refuses_a_foreign_origin_with_a_valid_token(server: ServeProcess) -> None:
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {
        "Authorization": f"Bearer {A}",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2025-06-18",
    }
    refused = httpx.post(
        f"{server.url}/mcp", json=request, headers={**headers, "Origin": "http://evil.example"}
    )
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "origin_not_allowed"
    served = httpx.post(f"{server.url}/mcp", json=request, headers=headers)
    assert served.status_code == 200 and "shop" in served.text


def test_f15_one_client_cannot_take_every_round_slot(server: ServeProcess, folder: Path) -> None:
    body = {"model": "desk", "messages": [{"role": "user", "content": "hold"}], "stream": True}
    with Held(folder) as held, httpx.Client(base_url=server.url, timeout=30) as leaving:
        request = leaving.build_request(
            "POST", "/v1/chat/completions", json=body, headers={"Authorization": f"Bearer {A}"}
        )
        first = leaving.send(request, stream=True)
        held.wait_until_held()
        first.close()  # A leaves; its round goes on, and counts against A's share
        again = httpx.post(
            f"{server.url}/v1/pipelines/shop/rounds",
            json={"message": "What does it cost?"},
            headers={"Authorization": f"Bearer {A}"},
            timeout=30,
        )
        assert again.status_code == 503 and "this client runs 1 rounds" in again.text
        other = httpx.post(
            f"{server.url}/v1/pipelines/shop/rounds",
            json={"message": "What does it cost?"},
            headers={"Authorization": f"Bearer {B}"},
            timeout=30,
        )
        assert other.status_code == 200, other.text
