"""The playground's routes, for `runner serve --playground` and `runner playground` to mount on
the service's app (runner.cli.webapp composes the two; the service never imports the playground).

The playground has no login of its own, so it is mounted only on a service without bearer
tokens, and such a service listens on this machine only (`runner serve`'s rule).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from runner.playground import PREFIX

if TYPE_CHECKING:
    from starlette.routing import BaseRoute

    from runner.serve.service import Service


class ServeError(Exception):
    """The playground cannot be served as asked; the message says why and what to do."""


def playground_routes(service: Service, tokens: Sequence[str] = ()) -> tuple[list[BaseRoute], str]:
    """The routes to add to `create_app(service, extra_routes=…, public_prefixes=[…])`, and
    their public prefix. Refused on a service with tokens: a browser page cannot send them, and
    a public playground would run rounds for anyone the API turns away."""
    if tokens:
        raise ServeError(
            "the playground has no login of its own and is not served with bearer tokens: "
            "serve it on 127.0.0.1 without tokens (`runner playground PIPELINE`), or serve the "
            "API alone"
        )
    from runner.playground.routes import routes

    return routes(service), PREFIX
