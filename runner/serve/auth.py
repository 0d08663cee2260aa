"""Bearer tokens behind Starlette's authentication middleware: the service's `Tokens` say who a
request is (runner.service.principals), this backend tells Starlette, which puts the client in
the request's scope for `client_of`."""

from __future__ import annotations

from starlette.authentication import (
    AuthCredentials,
    AuthenticationBackend,
    AuthenticationError,
    BaseUser,
)
from starlette.requests import HTTPConnection

from runner.service.errors import Unauthorized
from runner.service.principals import COOKIE, Client, Tokens


class ClientUser(BaseUser):
    """`request.user` of an authenticated request."""

    def __init__(self, client: Client) -> None:
        self.client = client

    @property
    def is_authenticated(self) -> bool:
        return True

    @property
    def display_name(self) -> str:
        return self.client.name


class TokenBackend(AuthenticationBackend):
    """Starlette's authentication over the service's bearer tokens (`Tokens`)."""

    def __init__(self, tokens: Tokens) -> None:
        self.tokens = tokens

    async def authenticate(self, conn: HTTPConnection) -> tuple[AuthCredentials, BaseUser] | None:
        try:
            client = self.tokens.who(
                conn.url.path, conn.headers.get("authorization", ""), conn.cookies.get(COOKIE)
            )
        except Unauthorized as exc:
            raise AuthenticationError(exc.message) from None
        return None if client is None else (AuthCredentials(["client"]), ClientUser(client))

    def client_for(self, token: str) -> Client | None:
        """The client a token is, or None when the service does not accept it."""
        return self.tokens.client_for(token)
