"""The playground's routes, for `runner serve --playground` and `runner playground` to mount on
the service's app (runner.cli.webapp composes the two; the service never imports the playground).

On a service with bearer tokens the playground asks for one on its login page and keeps it in
an HttpOnly, SameSite=Strict cookie; each token sees its own sessions. Without tokens the
service listens on this machine only (`runner serve`'s rule), and the playground keeps its
sessions in a store of its own unless `--state` names one (runner.cli.webapp).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from runner.playground import PREFIX

if TYPE_CHECKING:
    from starlette.routing import BaseRoute

    from runner.service.pipelines import Service

# the playground's own store file, beside each pipeline's production one (state.sqlite)
PLAYGROUND_STORE = "playground.sqlite"
# the playground's own folders: a pipeline of such a domain would have its pages behind them
RESERVED = frozenset({"static"})


class ServeError(Exception):
    """The playground cannot be served as asked; the message says why and what to do."""


@dataclass(frozen=True)
class Mounted:
    """What `create_app` needs to mount the playground."""

    routes: list[BaseRoute]
    public: list[str] = field(default_factory=list)  # paths that need no token
    cookie_prefixes: list[str] = field(default_factory=list)  # token in the login cookie
    login_path: str | None = None


def playground_routes(service: Service, tokens: Sequence[str] = (), *, secret: bytes) -> Mounted:
    """The playground over `service`; with `tokens`, behind its login page."""
    from runner.playground.routes import routes
    from runner.service.principals import Tokens

    for domain, runtime in service.runtimes.items():
        if domain in RESERVED:
            raise ServeError(
                f"{runtime.pipeline.path}: domain {domain!r} names the playground's own pages "
                f"({PREFIX}/{domain}); give the pipeline another `domain` to serve it there"
            )
    login = Tokens(tokens, key=service.client_key()).client_for if tokens else None
    return Mounted(
        routes(service, secret=secret, login=login),
        # matched whole (the login page) or as a folder (the static files), never as prefixes
        public=[f"{PREFIX}/login", f"{PREFIX}/static/"],
        cookie_prefixes=[PREFIX],
        login_path=f"{PREFIX}/login",
    )
