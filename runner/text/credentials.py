"""What looks like a credential in a text, and the text without it.

An LLM server's error body can echo a request's `Authorization` header or its API key; an MCP
server's error can echo the headers or the environment runner gave it; a user can paste a token
into a message; a document can hold one. Whatever leaves runner — a service's answers and
streams (runner.text.redact), an eval run's files, a trace file, a log line, the spans told to
OpenTelemetry (runner.observability.spans) — goes through `hide_credentials` first, so the rule
is written once.

Two kinds of thing are hidden:

- **the credentials a pipeline declares**: the value of every `${NAME}` its `mcp_servers`
  resolve in `headers`, `env` and `url`, and the key `llm.api_key_env` names. The loader tells
  them here (`remember_secrets`) as it reads the pipeline, so they are hidden wherever they turn
  up, whatever their shape;
- **the common shapes**: `Bearer …`, `Basic …` (base64 of `user:password`), `sk-…` keys,
  `Authorization:` and `X-…-Token` / `X-…-Key` / `X-…-Secret` headers, `api_key=` /
  `password=` pairs, the password in a URL (`http://user:PW@host`) and `password=`,
  `sslpassword=`, `token=`, `key=`, `secret=` query parameters.
"""

from __future__ import annotations

import base64
import binascii
import re
import threading
from collections.abc import Iterable, Mapping
from typing import Any

REDACTED = "[redacted]"
# a declared secret shorter than this is not hidden by value (it would hide ordinary words);
# its shape still may be
MIN_SECRET_CHARS = 6
# a secret's characters, and a lookahead that wants a digit or a symbol in them (or length): a
# real token has them, and "bearer tokens" or "password: required" in an answer stays as it is
_SECRET = r"[A-Za-z0-9._~+/=-]"
_LIKE_A_SECRET = r"(?=[^\s\"',;}&]*[0-9_.~+/=-]|[^\s\"',;}&]{16})"
_VALUE = r"[^\s\"',;}&]"
# each pattern, with the words (lower case) that one of its matches holds: most texts hold
# none of them, and looking for a word is many times quicker than searching the pattern
_CREDENTIALS = (
    (re.compile(rf"(?i)\b(bearer)\s+(?!\[redacted\]){_LIKE_A_SECRET}{_SECRET}{{8,}}"), ("bearer",)),
    (re.compile(r"\b(?:sk|pk|rk)-[A-Za-z0-9_-]{8,}"), ("sk-", "pk-", "rk-")),
    # a header whose name says it carries a secret: `X-Api-Token: …`, `X-Tickets-Key=…`
    (
        re.compile(
            r"(?i)([\"']?\bx-[a-z0-9-]*(?:token|key|secret|password|auth)[a-z0-9-]*[\"']?"
            rf"\s*[:=]\s*[\"']?)(?!\[redacted\]){_VALUE}{{4,}}"
        ),
        ("x-",),
    ),
    (
        re.compile(
            r"(?i)([\"']?\b(?:api[_-]?key|access[_-]?token|auth[_-]?token"
            r"|client[_-]?secret|secret[_-]?key|password)[\"']?\s*[:=]\s*[\"']?)"
            rf"(?!\[redacted\]){_LIKE_A_SECRET}{_VALUE}{{4,}}"
        ),
        ("key", "token", "secret", "password"),
    ),
    # a URL's password: `postgresql://runner:PW@db`, `http://svc:PW@tickets`
    (
        re.compile(
            r"(?i)(\b[a-z][a-z0-9+.-]*://[^\s/@:\"'<>]*:)(?!\[redacted\]|\*+@)[^\s/@\"'<>]+(?=@)"
        ),
        ("://",),
    ),
    # a query parameter that carries one, whatever it looks like: `?sslpassword=…&token=…`
    (
        re.compile(
            r"(?i)([?&;](?:ssl)?(?:password|passwd|pwd|token|access_token|api_key|apikey|key"
            r"|secret|sig|signature)=)(?!\[redacted\])[^&\s#\"'<>]+"
        ),
        ("=",),
    ),
)
_BASIC = re.compile(r"(?i)\b(basic)\s+([A-Za-z0-9+/]{6,}={0,2})(?![A-Za-z0-9+/=])")

_lock = threading.Lock()
_declared: tuple[str, ...] = ()  # the longest first, so that no part of one is left showing


def remember_secrets(values: Iterable[str | None]) -> None:
    """Hide each of `values` (the credentials a pipeline declares) in every text from now on."""
    global _declared
    fresh = {value.strip() for value in values if value and len(value.strip()) >= MIN_SECRET_CHARS}
    with _lock:
        if fresh - set(_declared):
            _declared = tuple(sorted(set(_declared) | fresh, key=len, reverse=True))


def hide_credentials(text: str) -> str:
    """`text` with each credential in it replaced by `[redacted]` (its label — `Bearer`,
    `api_key=`, `X-Api-Token:`, a URL's user — kept)."""
    for secret in _declared:
        if secret in text:
            text = text.replace(secret, REDACTED)
    lower = text.lower()
    for pattern, words in _CREDENTIALS:
        if any(word in lower for word in words):
            text = pattern.sub(_keep_label, text)
    if "basic" in lower:
        text = _BASIC.sub(_hide_basic, text)
    return text


def hide_in_json(value: Any) -> Any:
    """A JSON value with `hide_credentials` applied to every string in it."""
    if isinstance(value, str):
        return hide_credentials(value)
    if isinstance(value, Mapping):
        return {key: hide_in_json(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [hide_in_json(item) for item in value]
    return value


def _keep_label(match: re.Match[str]) -> str:
    label = match.group(1) if match.lastindex else None
    if label is None:
        return REDACTED
    return f"{label} {REDACTED}" if label.lower() == "bearer" else label + REDACTED


def _hide_basic(match: re.Match[str]) -> str:
    """`Basic dXNlcjpwdw==` when it decodes to `user:password`; "basic program" stays."""
    try:
        decoded = base64.b64decode(match.group(2) + "=" * (-len(match.group(2)) % 4), validate=True)
    except (binascii.Error, ValueError):
        return match.group(0)
    if b":" not in decoded:
        return match.group(0)
    return f"{match.group(1)} {REDACTED}"
