"""Bounded connections: what the service does so that no client holds a connection open.

- `BodyDeadline`: every request's body must arrive within the body timeout, whatever route
  reads it (the APIs, `/mcp`, the playground's forms). Past it the client gets a 408 with
  `Connection: close` and the connection is closed, though bytes keep trickling in (each byte
  would otherwise keep it alive).
- `McpGuard`: `/mcp` takes only requests whose `Origin`, when they carry one, is this service
  (the MCP specification asks servers to validate it; with tokens as without), and answers
  `GET /mcp` — an event stream a stateless server never sends anything on — with a 405.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any
from urllib.parse import urlsplit

from starlette.types import ASGIApp, Message, Receive, Scope, Send

log = logging.getLogger("runner.serve")
MCP_PATH = "/mcp"
GRACE_S = 0.05  # past the deadline, how long one last read may wait for what has arrived


class BodyDeadline:
    """A request body arrives within `timeout_s` of the request's start, or the request is
    answered 408 and its connection closed."""

    def __init__(self, app: ASGIApp, timeout_s: float) -> None:
        self.app = app
        self.timeout_s = timeout_s

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        deadline = time.monotonic() + self.timeout_s
        body_done = False
        started = answered = late = False

        async def receive_in_time() -> Message:
            nonlocal body_done, answered, late
            if body_done or answered:
                return await receive() if not answered else {"type": "http.disconnect"}
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                # a route that starts reading late still gets what has arrived, once: uvicorn
                # hands over the whole buffered body in one message
                remaining, late = (GRACE_S, True) if not late else (0.0, late)
            try:
                if remaining <= 0:
                    raise asyncio.TimeoutError
                message = await asyncio.wait_for(receive(), remaining)
            except asyncio.TimeoutError:
                log.info("runner serve: a request body to %s was too slow; closed", scope["path"])
                if not started:
                    await _send_error(send, 408, _too_slow(self.timeout_s))
                answered = True
                return {"type": "http.disconnect"}
            body_done = message["type"] != "http.request" or not message.get("more_body", False)
            return message

        async def send_unless_answered(message: Message) -> None:
            nonlocal started
            if answered:
                return  # the 408 went out: what the route says after it has no reader
            if message["type"] == "http.response.start":
                started = True
                if _too_slow_response(message):  # the route's own 408: close as well
                    message = _closing(message)
            await send(message)

        await self.app(scope, receive_in_time, send_unless_answered)


class McpGuard:
    """`/mcp`: a foreign `Origin` refused (403), `GET` refused (405); other paths untouched."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].rstrip("/") != MCP_PATH:
            await self.app(scope, receive, send)
            return
        headers = {
            name.decode("latin-1"): value.decode("latin-1") for name, value in scope["headers"]
        }
        origin = headers.get("origin")
        if origin is not None and urlsplit(origin).netloc != headers.get("host"):
            await _send_error(
                send,
                403,
                f"refused a request to /mcp from the origin {origin!r}: /mcp takes requests "
                "from this service's own origin, or from clients that send none",
            )
            return
        if scope["method"] == "GET":
            await _send_error(
                send,
                405,
                "this MCP server is stateless and sends no messages of its own: POST each "
                "request to /mcp (no event stream is served on GET)",
                extra=[(b"allow", b"POST")],
            )
            return
        await self.app(scope, receive, send)


def _too_slow(timeout_s: float) -> str:
    return f"the request body did not arrive within {timeout_s:g} s"


def _too_slow_response(message: Message) -> bool:
    return int(message.get("status", 0)) == 408


def _closing(message: Message) -> Message:
    headers = [(k, v) for k, v in message.get("headers", []) if k.lower() != b"connection"]
    return {**message, "headers": [*headers, (b"connection", b"close")]}


async def _send_error(
    send: Send, status: int, message: str, extra: list[tuple[bytes, bytes]] | None = None
) -> None:
    kinds = {403: "permission_error", 405: "invalid_request_error", 408: "invalid_request_error"}
    codes = {403: "origin_not_allowed", 405: "method_not_allowed", 408: "request_timeout"}
    error: dict[str, Any] = {
        "message": message,
        "type": kinds.get(status, "invalid_request_error"),
        "param": None,
        "code": codes.get(status, "invalid_request"),
    }
    body = json.dumps({"error": error}).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        *(extra or []),
    ]
    if status == 408:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
