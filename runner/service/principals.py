"""Clients: who sent a request, and what is theirs (docs/security.md).

A bearer token is a client. Everything a client makes is named inside its own namespace, so
that nothing needs a table of owners and nothing of one client is reachable by another:

- a session the service creates for it is `<scope>-<random id>`, and the session its OpenAI
  `user` field names is `<scope>-u-<user>`: another client asking for either gets the 404 of a
  session that does not exist;
- its idempotency keys are stored as `<scope>/<domain>/<key>`: the same key sent by another
  client, or to another pipeline, is another request.

A client's scope is the start of an HMAC-SHA-256 of its token keyed with the store's own random
secret (`Store.secret`): the token is never stored, and a session id, which is seen in URLs,
logs and spans, gives nothing to guess the token from offline. A
service without tokens has one client, `local` (scope ""), which owns every session: it serves
this machine only (`runner serve` refuses another address without tokens).

Which client a request is (`Tokens.who`): the `Authorization: Bearer` header, or on the
playground's pages the cookie its login sets. This room knows no web framework: the faces put
it behind theirs (`runner.serve.auth`: Starlette's authentication middleware), and read the
client back from the request's ASGI scope (`client_of`).
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from runner.service.errors import BadRequest, NotFound, Unauthorized

COOKIE = "runner_token"  # the playground's login cookie (HttpOnly, SameSite=Strict)
SCOPE_CHARS = 12
MAX_NAME_CHARS = 200
READABLE_USER_CHARS = 64  # a longer `user` is named by its digest: the id stays short
# what a session id or a `user` sent by a client may hold: it comes back in a header
_SAFE_ID = re.compile(r"[A-Za-z0-9._@+:-]{1,200}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


@dataclass(frozen=True)
class Client:
    """Who sent a request: `name` for logs, `scope` the prefix of everything it owns."""

    name: str
    scope: str

    @classmethod
    def for_token(cls, token: str, key: bytes) -> Client:
        """The client of `token`, its scope keyed with the service's secret `key`."""
        digest = hmac.new(key, token.encode("utf-8"), hashlib.sha256).hexdigest()[:SCOPE_CHARS]
        return cls(f"client-{digest}", digest)

    def owns(self, session_id: str) -> bool:
        return not self.scope or session_id.startswith(self.scope + "-")

    def check_owns(self, session_id: str) -> None:
        """NotFound, worded as for a session that does not exist, unless it is this client's."""
        if not self.owns(session_id):
            raise NotFound(not_found_message(session_id))

    def new_session_id(self) -> str:
        from runner.sessions import new_session_id

        return self._scoped(new_session_id())

    def user_session(self, user: str) -> str:
        """The session an OpenAI request's `user` names, inside this client's namespace."""
        if _CONTROL.search(user) or not user.strip() or len(user) > MAX_NAME_CHARS:
            raise BadRequest(
                f"`user` must be 1 to {MAX_NAME_CHARS} characters without line breaks or "
                "control characters"
            )
        # readable when it can be echoed in a header as it is; else a digest of it
        readable = _SAFE_ID.fullmatch(user) and len(user) <= READABLE_USER_CHARS
        shown = user if readable else hashlib.sha256(user.encode()).hexdigest()[:16]
        return self._scoped(f"u-{shown}")

    def request_key(self, domain: str, request_id: str | None) -> str | None:
        """An idempotency key as stored: this client's, on this pipeline."""
        return None if request_id is None else f"{self.scope}/{domain}/{request_id}"

    def shown_request_id(self, stored: str | None) -> str | None:
        """A stored idempotency key as its client sent it."""
        if stored is None:
            return None
        scope, slash, rest = stored.partition("/")
        if not slash or scope != self.scope:
            return stored
        return rest.partition("/")[2]

    def _scoped(self, name: str) -> str:
        return f"{self.scope}-{name}" if self.scope else name


LOCAL = Client("local", "")
# a request no token let through (a public path of a service with tokens): it owns nothing
NOBODY = Client("anonymous", "\x00")


def check_session_id(session_id: str | None) -> str | None:
    """A session id a client sent: letters, digits and `._@+:-` (it is echoed in a header)."""
    if session_id is not None and not _SAFE_ID.fullmatch(session_id):
        raise BadRequest(
            "a session id is 1 to 200 letters, digits and `._@+:-`: send the id the service "
            "gave (the `session` field, or the X-Runner-Session header)"
        )
    return session_id


def not_found_message(session_id: str) -> str:
    return (
        f"no session {session_id!r} here: continue a session with the id the service gave, or "
        "leave it out to start a new one"
    )


class Tokens:
    """The bearer tokens a service accepts, and who each one is. Without tokens every request
    is the `local` client. With them, the `public` paths need none (health checks, the
    playground's login and its static files: `matched`, whole paths or folders); a path under
    `cookie_prefixes` may carry the token in the login cookie instead of the header."""

    def __init__(
        self,
        tokens: Sequence[str],
        public: Sequence[str] = (),
        cookie_prefixes: Sequence[str] = (),
        *,
        key: bytes,
    ) -> None:
        self._tokens = [token.encode("utf-8") for token in tokens]
        self._key = key  # names the clients (Client.for_token)
        self._public = tuple(public)
        self._cookie_prefixes = tuple(cookie_prefixes)

    def who(self, path: str, authorization: str, cookie: str | None) -> Client | None:
        """The client a request to `path` is, from its Authorization header and its login
        cookie; None: nobody, on a public path. Raises Unauthorized (what to send instead)."""
        if not self._tokens:
            return LOCAL
        given = bearer(authorization)
        if given is None and under(path, self._cookie_prefixes):
            given = cookie or None
        if given is None:
            if matched(path, self._public):
                return None
            raise Unauthorized(
                "this service needs a bearer token: send the header `Authorization: Bearer <token>`"
            )
        client = self.client_for(given)
        if client is None:
            if matched(path, self._public):  # the login page, whatever an old cookie holds
                return None
            raise Unauthorized("the bearer token is not one this service accepts")
        return client

    def client_for(self, token: str) -> Client | None:
        """The client a token is, or None when the service does not accept it."""
        # compared as UTF-8 bytes: a token with non-ASCII characters is refused, not a 500
        given = token.strip().encode("utf-8", "surrogateescape")
        if any(hmac.compare_digest(given, known) for known in self._tokens):
            return Client.for_token(token.strip(), self._key)
        return None


def bearer(header: str) -> str | None:
    scheme, _, given = header.partition(" ")
    return given.strip() or None if scheme.lower() == "bearer" else None


def under(path: str, prefixes: Sequence[str]) -> bool:
    return any(path == p or path.startswith(p.rstrip("/") + "/") for p in prefixes)


def matched(path: str, public: Sequence[str]) -> bool:
    """Whether `path` is one of the `public` ones: each is a path matched whole
    (`/playground/login`), or a folder written with its closing slash (`/playground/static/`)
    whose files it matches. Matched, not prefixed: a pipeline named `login` does not make
    `/playground/login/…` public."""
    return any(path.startswith(p) if p.endswith("/") else path == p for p in public)


class HasScope(Protocol):
    """An HTTP request of any ASGI framework: its `scope`."""

    @property
    def scope(self) -> Mapping[str, Any]: ...


def client_of(request: HasScope) -> Client:
    """The client of a request, as the face's authentication put it in the request's ASGI
    scope (`scope["user"].client`): `local` without tokens; `anonymous`, owning nothing, on a
    public path of a service with tokens."""
    client = getattr(request.scope.get("user"), "client", None)
    return client if isinstance(client, Client) else NOBODY
