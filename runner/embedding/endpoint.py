"""One JSON POST to a service's endpoint, bounded and retried: what the embedding services
(remote.py) and the rerank endpoints (rerank_service.py) share.

A request is given `timeout_s`; a 429, a 5xx, a refused connection or a timeout is tried again,
ATTEMPTS times in all, waiting BACKOFF_S and then twice as long before each next attempt; any
other refusal fails at once. The error names the endpoint, the last status and the attempts.
The key is read from the environment variable the pipeline names, never from the file.

The standard library's urllib speaks HTTP: nothing needs installing.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from typing import Any

ATTEMPTS = 4  # a request tried at most this often on 429, 5xx or a timeout
BACKOFF_S = 0.5  # before the second attempt; doubled before each next
RETRIED = frozenset({429, 500, 502, 503, 504})


def post_json(
    url: str,
    body: dict[str, Any],
    *,
    timeout_s: float,
    key_env: str | None,
    error: Callable[[str], Exception],
) -> Any:
    """The reply of POST `url` with `body` as JSON, parsed; `error(problem)` is raised when the
    service cannot answer (the problem says why, and how often it was tried)."""
    headers = {"Content-Type": "application/json"}
    key = os.environ.get(key_env, "") if key_env else ""
    if key_env and not key:
        raise error(f"the environment variable {key_env} is not set")
    if key:
        headers["Authorization"] = f"Bearer {key}"
    data = json.dumps(body).encode("utf-8")
    why = ""
    attempt = 0
    for attempt in range(ATTEMPTS):
        if attempt:
            time.sleep(BACKOFF_S * 2 ** (attempt - 1))
        request = urllib.request.Request(url, data=data, headers=headers, method="POST")
        try:
            with opener(url).open(request, timeout=timeout_s) as response:
                return json.loads(response.read().decode("utf-8"))
        except urllib.error.HTTPError as refused:
            why = f"HTTP {refused.code}: {_text(refused.read())}"
            if refused.code not in RETRIED:
                break
        except (TimeoutError, urllib.error.URLError, ConnectionError) as failed:
            why = str(getattr(failed, "reason", failed))
        except ValueError as bad:  # not JSON
            raise error(f"its reply is not JSON ({bad})") from None
    raise error(f"{why} (tried {attempt + 1} times)")


def opener(url: str) -> urllib.request.OpenerDirector:
    """A service on this machine is reached directly, never through the environment's proxy."""
    host = urllib.parse.urlsplit(url).hostname or ""
    local = host in ("localhost", "::1") or host.startswith("127.")
    handlers = [urllib.request.ProxyHandler({})] if local else []
    return urllib.request.build_opener(*handlers)


def _text(body: bytes) -> str:
    return body.decode("utf-8", "replace").strip()[:200]


def cut(text: str, max_chars: int) -> str:
    """A text held to `max_chars` characters (a service refuses, or cuts itself, an input longer
    than its model reads): its beginning, where a page's place and lead text are."""
    return text if len(text) <= max_chars else text[:max_chars]
