"""The HTTP edges every route shares: bearer tokens, bodies (their media type, size and time),
JSON errors."""

from __future__ import annotations

import asyncio
import json
import logging
import os
from pathlib import Path
from typing import Any

from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse

from runner.serve.config import DEFAULTS
from runner.service.errors import (
    BadRequest,
    ClientGone,
    ServiceError,
    TooLarge,
    TooSlow,
    UnsupportedMediaType,
)
from runner.text.redact import ERRORS

TOKENS_ENV = "RUNNER_SERVE_TOKENS"  # comma-separated bearer tokens
log = logging.getLogger("runner.serve")


def load_tokens(token_file: Path | None = None) -> list[str]:
    """Bearer tokens from RUNNER_SERVE_TOKENS (comma-separated) and from `token_file` (one a
    line, `#` comments); empty when neither gives any."""
    tokens = [t.strip() for t in os.environ.get(TOKENS_ENV, "").split(",") if t.strip()]
    if token_file is not None:
        for line in token_file.read_text(encoding="utf-8").splitlines():
            line = line.strip()
            if line and not line.startswith("#"):
                tokens.append(line)
    return tokens


async def read_json(request: Request, limit: int, timeout_s: float | None = None) -> dict[str, Any]:
    """The request's JSON object: sent as `application/json` (a page of another site can post
    a form or text/plain without asking, never JSON), refused past `limit` bytes (read no
    further than that) or when it takes longer than `timeout_s` to arrive."""
    media_type = request.headers.get("content-type", "").partition(";")[0].strip().lower()
    if media_type != "application/json":
        raise UnsupportedMediaType(
            f"send the body as JSON with the header `Content-Type: application/json` "
            f"(this request's is {media_type or 'missing'})"
        )
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise _too_large(int(declared), limit)
    if timeout_s is None:  # the app's setting (create_app's body_timeout_s)
        timeout_s = getattr(request.app.state, "body_timeout_s", DEFAULTS.body_timeout_s)
    wait = float(timeout_s)
    try:
        body = await asyncio.wait_for(_read_body(request, limit), timeout=wait)
    except asyncio.TimeoutError:
        log.info(
            "runner serve: a request body to %s took over %g s; refused", request.url.path, wait
        )
        raise TooSlow(f"the request body did not arrive within {wait:g} s") from None
    except ClientDisconnect:
        log.warning("runner serve: a client left while sending its request to %s", request.url.path)
        raise ClientGone("the client left before its request body arrived") from None
    try:
        data = json.loads(body)
    except RecursionError:
        raise BadRequest("the request body nests JSON too deeply") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise BadRequest(f"the request body is not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise BadRequest("the request body must be a JSON object")
    _check_text(data)
    return data


def _check_text(data: dict[str, Any]) -> None:
    """A 400 for a string that is no text: a lone surrogate (`"\\ud800"`) is valid JSON, but
    no UTF-8 can hold it, so it could be neither stored nor sent back."""
    try:
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as exc:
        raise BadRequest(
            f"the request body holds a character that is not text (a lone surrogate, "
            f"{exc.object[exc.start : exc.end]!a}): send UTF-8 text, each surrogate in a pair"
        ) from None


async def _read_body(request: Request, limit: int) -> bytes:
    body = bytearray()
    async for chunk in request.stream():
        body.extend(chunk)
        if len(body) > limit:
            raise _too_large(len(body), limit)
    return bytes(body)


def _too_large(size: int, limit: int) -> TooLarge:
    return TooLarge(f"the request body has {size:,}+ bytes, more than this service's {limit:,}")


def error_response(error: ServiceError, headers: dict[str, str] | None = None) -> JSONResponse:
    """The error as JSON, its message redacted (no credential, no path of this machine)."""
    body = error.to_json()
    body["error"]["message"] = ERRORS.error(str(body["error"]["message"]))
    return JSONResponse(
        body, status_code=error.status, headers={**error.headers, **(headers or {})}
    )


def optional_text(data: dict[str, Any], name: str) -> str | None:
    value = data.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise BadRequest(f"`{name}` must be a string")
    return value


def request_id_of(request: Request, data: dict[str, Any]) -> str | None:
    """The body's `request_id` or the `Idempotency-Key` header (the same when both are sent)."""
    from_body = optional_text(data, "request_id")
    from_header = request.headers.get("idempotency-key")
    if from_body is not None and from_header is not None and from_body != from_header:
        raise BadRequest("`request_id` and the Idempotency-Key header differ; send one of them")
    return from_body if from_body is not None else from_header
