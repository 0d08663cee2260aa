"""The HTTP edges every route shares: bearer tokens, body limits, JSON errors."""

from __future__ import annotations

import hmac
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse

from runner.serve.errors import BadRequest, ServiceError, TooLarge, Unauthorized

TOKENS_ENV = "RUNNER_SERVE_TOKENS"  # comma-separated bearer tokens
DEFAULT_MAX_BODY_BYTES = 1 << 20


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


def check_token(request: Request, tokens: Sequence[str]) -> None:
    if not tokens:
        return
    header = request.headers.get("authorization", "")
    scheme, _, given = header.partition(" ")
    if scheme.lower() != "bearer" or not given:
        raise Unauthorized(
            "this service needs a bearer token: send the header `Authorization: Bearer <token>`"
        )
    if not any(hmac.compare_digest(given.strip(), token) for token in tokens):
        raise Unauthorized("the bearer token is not one this service accepts")


async def read_json(request: Request, limit: int) -> dict[str, Any]:
    """The request's JSON object, refused past `limit` bytes (read no further than that)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise _too_large(int(declared), limit)
    body = bytearray()
    async for chunk in request.stream():
        body.extend(chunk)
        if len(body) > limit:
            raise _too_large(len(body), limit)
    try:
        data = json.loads(body)
    except (UnicodeDecodeError, ValueError) as exc:
        raise BadRequest(f"the request body is not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise BadRequest("the request body must be a JSON object")
    return data


def _too_large(size: int, limit: int) -> TooLarge:
    return TooLarge(f"the request body has {size:,}+ bytes, more than this service's {limit:,}")


def error_response(error: ServiceError, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(error.to_json(), status_code=error.status, headers=headers)


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
