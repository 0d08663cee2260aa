"""What every response of the service carries, and which requests it answers at all.

- `allowed_hosts`: the Host names the service answers, `TrustedHosts` the middleware that
  refuses the others with a 400. A page elsewhere that points its own name at 127.0.0.1 (DNS
  rebinding) sends its own name and gets a 400: the default is the bound address and this
  machine's loopback names, more with `--allowed-host`. IPv6 addresses are answered as a
  browser writes them in a Host, in brackets (`[::1]:8000`).
- `SecurityHeaders`: a Content-Security-Policy that runs only the service's own scripts and
  lets no other site frame its pages, `nosniff`, and no referrer sent elsewhere.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Sequence
from typing import Any

from starlette.datastructures import Headers
from starlette.middleware.trustedhost import TrustedHostMiddleware

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


# an IPv6 address in a Host, as RFC 3986 writes it: in brackets, then a port or none
_BRACKETED = re.compile(r"\[([0-9A-Fa-f:.]+)\](?::[0-9]*)?")


def ipv6_literal(name: str) -> ipaddress.IPv6Address | None:
    """The IPv6 address `name` is (`::1`, `[::1]`; a Host's `[::1]:8000`), or None: for other
    names, a zone (`%eth0`), and anything that is not exactly that (`[::1]evil`, `[::1`)."""
    bracketed = _BRACKETED.fullmatch(name)
    text = bracketed[1] if bracketed else name
    if not bracketed and not re.fullmatch(r"[0-9A-Fa-f:.]+", name):
        return None
    try:
        return ipaddress.IPv6Address(text)
    except ValueError:
        return None


def host_name_problem(name: str) -> str | None:
    """Why `name` cannot be a Host name to answer (--allowed-host), or None."""
    if not name:
        return "an empty name"
    if "[" in name or "]" in name:
        if not (name.startswith("[") and name.endswith("]")) or ipv6_literal(name) is None:
            return "brackets hold an IPv6 address and nothing else, without a port: [fd00::2]"
        return None
    if ":" in name and ipv6_literal(name) is None:
        return "a name without its port: runner.example.com, not runner.example.com:8000"
    if "*" in name[1:] or (name.startswith("*") and name != "*" and not name.startswith("*.")):
        return "a wildcard stands for whole leading labels only: *.example.com"
    return None


def check_host_names(names: Sequence[str]) -> None:
    """Raises ValueError naming the first of `names` that cannot be answered, and why."""
    for name in names:
        if problem := host_name_problem(name):
            raise ValueError(f"the allowed host {name!r} cannot be answered: {problem}")


class TrustedHosts(TrustedHostMiddleware):
    """Starlette's TrustedHostMiddleware that also answers bracketed IPv6 Hosts.

    Starlette cuts a Host at its first ':' (`[::1]:8000` is `[`), so it never matches an IPv6
    address. Subclassed rather than rewritten: names, wildcards and every refusal stay
    Starlette's, well worn; only a Host in brackets is read here, and answered when it is
    exactly an allowed address in brackets (a port after it or not).
    """

    def __init__(self, app: Any, allowed_hosts: Sequence[str]) -> None:
        check_host_names(allowed_hosts)
        addresses = {name: ipv6_literal(name) for name in allowed_hosts}
        self.addresses = frozenset(address for address in addresses.values() if address)
        names = [name for name, address in addresses.items() if address is None]
        super().__init__(app, allowed_hosts=names)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] in ("http", "websocket") and not self.allow_any:
            host = Headers(scope=scope).get("host", "")
            if host.startswith("[") and ipv6_literal(host) in self.addresses:
                await self.app(scope, receive, send)
                return
            if scope["type"] == "http" and not self._answered(host):
                await _refuse_host(scope, receive, send)
                return
        # any other bracketed Host is refused there with its 400: no name it holds has a bracket
        await super().__call__(scope, receive, send)

    def _answered(self, host: str) -> bool:
        """Whether Starlette would answer this Host (or redirect it to its `www.` name): the
        others get the service's JSON error instead of Starlette's plain text."""
        name = host.split(":")[0]
        return any(
            name == pattern
            or (pattern.startswith("*") and name.endswith(pattern[1:]))
            or pattern == f"www.{name}"
            for pattern in self.allowed_hosts
        )


async def _refuse_host(scope: Any, receive: Any, send: Any) -> None:
    """A Host the service does not answer: a 400 in the service's error shape, as every other
    refusal (docs/serve.md#errors)."""
    from starlette.responses import JSONResponse

    from runner.service.errors import BadRequest

    error = BadRequest(
        "the Host header names no host this service answers; call it by its own address "
        "(or add the name with --allowed-host)"
    )
    await JSONResponse(error.to_json(), status_code=error.status)(scope, receive, send)


def allowed_hosts(bound: str, extra: Sequence[str] = ()) -> list[str]:
    """The Host names to answer: `extra` (from --allowed-host), the bound address and the
    loopback names; bound to every address, this machine's own names too."""
    names = [*extra, *LOOPBACK_NAMES]
    if bound in _ANY_ADDRESS:
        hostname = socket.gethostname()
        names += [hostname, socket.getfqdn(hostname)]
    else:
        names.append(f"[{bound}]" if ":" in bound else bound)
    # this machine's names as it tells them: one that no Host can match is left out
    return list(dict.fromkeys(name for name in names if not host_name_problem(name)))


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
