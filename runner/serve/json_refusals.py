"""Plain-text refusals made JSON: what the MCP SDK answers itself on `/mcp` ("Invalid Origin
header", a 406 or 405 of its transport…) leaves in the service's error shape,
`{"error": {"message", "type", "code"}}`, as every other refusal of the service does
(docs/serve.md#errors). A response that is JSON already (the SDK's JSON-RPC errors, the
service's own) passes as it is; so does every success.
"""

from __future__ import annotations

from typing import Any

from runner.service.errors import ServiceError

# status -> (the error's type, its code: a string, as the OpenAI API's codes are)
_KINDS = {
    401: ("authentication_error", "unauthorized"),
    403: ("permission_error", "forbidden"),
    404: ("not_found_error", "not_found"),
    405: ("invalid_request_error", "method_not_allowed"),
    409: ("conflict_error", "conflict"),
    503: ("unavailable_error", "unavailable"),
}
MAX_MESSAGE_CHARS = 500


def refusal(status: int, text: str) -> bytes:
    """A refusal's JSON body, the service's shape around the text it had."""
    import json

    error = ServiceError(text.strip()[:MAX_MESSAGE_CHARS] or f"refused with HTTP {status}")
    error.status = status
    fallback = ("invalid_request_error", "invalid_request") if status < 500 else None
    error.kind, error.code = _KINDS.get(status) or fallback or ("internal_error", "internal_error")
    return json.dumps(error.to_json()).encode()


class JsonRefusals:
    """Wraps an ASGI app; its non-JSON answers of status 400 or more are rewritten."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        held: dict[str, Any] = {}
        body: list[bytes] = []

        async def rewriting(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                if message["status"] >= 400 and not _is_json(message.get("headers") or []):
                    held["start"] = message
                    return
            elif message["type"] == "http.response.body" and "start" in held:
                body.append(message.get("body", b""))
                if message.get("more_body"):
                    return
                await _send_json(send, held["start"], b"".join(body))
                return
            await send(message)

        await self.app(scope, receive, rewriting)


def _is_json(headers: list[tuple[bytes, bytes]]) -> bool:
    return any(
        name.lower() == b"content-type" and value.split(b";")[0].strip().endswith(b"json")
        for name, value in headers
    )


async def _send_json(send: Any, start: dict[str, Any], text: bytes) -> None:
    status = int(start["status"])
    payload = refusal(status, text.decode("utf-8", "replace"))
    kept = [
        (name, value)
        for name, value in start.get("headers") or []
        if name.lower() not in (b"content-type", b"content-length")
    ]
    headers = [
        *kept,
        (b"content-type", b"application/json"),
        (b"content-length", str(len(payload)).encode()),
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})
