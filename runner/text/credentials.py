"""What looks like a credential in a text, and the text without it.

An LLM server's error body can echo a request's `Authorization` header or its API key; a user
can paste a token into a message; a document can hold one. Whatever leaves runner — a service's
answers (runner.service.redact), the spans told to OpenTelemetry (runner.observability.spans) —
goes through `hide_credentials` first, so the rule is written once.
"""

from __future__ import annotations

import re

REDACTED = "[redacted]"
# a secret's characters, and a lookahead that wants a digit or a symbol in them (or length): a
# real token has them, and "bearer tokens" or "password: required" in an answer stays as it is
_SECRET = r"[A-Za-z0-9._~+/=-]"
_LIKE_A_SECRET = r"(?=[^\s\"',;}&]*[0-9_.~+/=-]|[^\s\"',;}&]{16})"
# each pattern, with the words (lower case) that one of its matches holds: most texts hold
# none of them, and looking for a word is many times quicker than searching the pattern
_CREDENTIALS = (
    (re.compile(rf"(?i)\b(bearer)\s+{_LIKE_A_SECRET}{_SECRET}{{8,}}"), ("bearer",)),
    (re.compile(r"\b(?:sk|pk|rk)-[A-Za-z0-9_-]{8,}"), ("sk-", "pk-", "rk-")),
    (
        re.compile(
            r"(?i)([\"']?\b(?:api[_-]?key|x-api-key|access[_-]?token|auth[_-]?token"
            r"|client[_-]?secret|secret[_-]?key|password)[\"']?\s*[:=]\s*[\"']?)"
            rf"{_LIKE_A_SECRET}[^\s\"',;}}&]{{4,}}"
        ),
        ("key", "token", "secret", "password"),
    ),
)


def hide_credentials(text: str) -> str:
    """`text` with each thing that looks like a credential replaced by `[redacted]` (its label,
    `Bearer` or `api_key=`, kept)."""
    lower = text.lower()
    for pattern, words in _CREDENTIALS:
        if any(word in lower for word in words):
            text = pattern.sub(_keep_label, text)
    return text


def _keep_label(match: re.Match[str]) -> str:
    label = match.group(1) if match.lastindex else None
    if label is None:
        return REDACTED
    return f"{label} {REDACTED}" if label.lower() == "bearer" else label + REDACTED
