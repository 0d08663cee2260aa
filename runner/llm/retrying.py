"""Which failures of a provider call are worth another try, and how long to wait before it."""

from __future__ import annotations

import asyncio
import json
import random

# Exception class names (anywhere in the MRO) that mean "try again": openai's connection and
# timeout errors, httpx's transport errors. Matched by name so we never import those packages.
_TRANSIENT_NAMES = frozenset(
    {"APIConnectionError", "APITimeoutError", "TransportError", "TimeoutException"}
)
# A reply whose body is not JSON: openai's parse failure, or json's own (httpx, ollama).
_BROKEN_BODY_NAMES = frozenset({"APIResponseValidationError", "JSONDecodeError"})


def is_transient(error: BaseException) -> bool:
    status = getattr(error, "status_code", None)
    if is_broken_body(error):
        return True
    if isinstance(status, int):
        return status in (408, 409, 429) or status >= 500
    if isinstance(error, (asyncio.TimeoutError, TimeoutError, ConnectionError)):
        return True
    return any(cls.__name__ in _TRANSIENT_NAMES for cls in type(error).__mro__)


def is_broken_body(error: BaseException) -> bool:
    """An answer that arrived but is not JSON (a proxy's error page, a cut-off body): the
    server's fault of the moment, like a 5xx, never the pipeline's settings."""
    if isinstance(error, json.JSONDecodeError):
        return True
    return any(cls.__name__ in _BROKEN_BODY_NAMES for cls in type(error).__mro__)


def backoff_delay(retry: int, base_s: float, max_s: float, rng: random.Random) -> float:
    """Exponential (base, 2×base, 4×base…, capped at max_s), times a random factor in
    [0.5, 1] so that many clients' retries do not move in step."""
    return min(max_s, base_s * (2**retry)) * rng.uniform(0.5, 1.0)
