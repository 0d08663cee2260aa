"""What every response of the service carries, and which requests it answers at all.

- `allowed_hosts`: the Host names the service answers (Starlette's TrustedHostMiddleware). A
  page elsewhere that points its own name at 127.0.0.1 (DNS rebinding) sends its own name and
  gets a 400: the default is the bound address and this machine's loopback names, more with
  `--allowed-host`.
- `SecurityHeaders`: a Content-Security-Policy that runs only the service's own scripts and
  lets no other site frame its pages, `nosniff`, and no referrer sent elsewhere.
"""

from __future__ import annotations

import socket
from collections.abc import Sequence
from typing import Any

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1", "[::1]")
_ANY_ADDRESS = ("0.0.0.0", "::", "")

CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)
SECURITY_HEADERS = (
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
)


def allowed_hosts(bound: str, extra: Sequence[str] = ()) -> list[str]:
    """The Host names to answer: `extra` (from --allowed-host), the bound address and the
    loopback names; bound to every address, this machine's own names too."""
    names = [*extra, *LOOPBACK_NAMES]
    if bound in _ANY_ADDRESS:
        hostname = socket.gethostname()
        names += [hostname, socket.getfqdn(hostname)]
    else:
        names.append(f"[{bound}]" if ":" in bound else bound)
    return list(dict.fromkeys(name for name in names if name))


class SecurityHeaders:
    """Adds SECURITY_HEADERS to every HTTP response (a plain ASGI middleware)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Any) -> None:
            if message["type"] == "http.response.start":
                present = {name.lower() for name, _value in message.get("headers", [])}
                extra = [(n, v) for n, v in SECURITY_HEADERS if n not in present]
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        await self.app(scope, receive, with_headers)
