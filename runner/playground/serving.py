"""Serving the playground: its routes in `runner serve`'s app, and the local server of `runner
playground`.

The playground has no login of its own, so it is mounted only on a service without bearer
tokens, and such a service listens on this machine only (`runner serve`'s rule).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from runner.playground import PREFIX

if TYPE_CHECKING:
    from starlette.routing import BaseRoute

    from runner.serve.service import Service

LOCAL_HOST = "127.0.0.1"


class ServeError(Exception):
    """The playground cannot be served as asked; the message says why and what to do."""


def playground_routes(service: Service, tokens: Sequence[str] = ()) -> tuple[list[BaseRoute], str]:
    """The routes to add to `create_app(service, extra_routes=…, public_prefixes=[…])`, and
    their public prefix. Refused on a service with tokens: a browser page cannot send them, and
    a public playground would run rounds for anyone the API turns away."""
    if tokens:
        raise ServeError(
            "the playground has no login of its own and cannot be served with bearer tokens: "
            "run it without tokens on 127.0.0.1 (`runner playground PIPELINE`), or serve the API "
            "alone"
        )
    from runner.playground.routes import routes

    return routes(service), PREFIX


class LocalServer:
    """uvicorn on 127.0.0.1 serving one service's API and playground."""

    def __init__(self, service: Service, port: int) -> None:
        self.service = service
        self.port = port

    def run(self, started: Callable[[str], None]) -> None:
        """Serve until interrupted; `started(url)` once the socket listens (port 0: the port
        the system chose)."""
        import uvicorn

        from runner.serve.app import create_app

        routes, prefix = playground_routes(self.service)
        app = create_app(self.service, extra_routes=routes, public_prefixes=[prefix])

        class Server(uvicorn.Server):
            async def startup(self, sockets: Any = None) -> None:
                await super().startup(sockets)
                if self.servers and self.servers[0].sockets:
                    port = self.servers[0].sockets[0].getsockname()[1]
                    started(f"http://{LOCAL_HOST}:{port}{PREFIX}/")

        config = uvicorn.Config(app, host=LOCAL_HOST, port=self.port, log_level="warning")
        Server(config).run()


def local_server(
    paths: Sequence[str | Path],
    *,
    port: int,
    state: str | None = None,
    llm_override: str | None = None,
    allow_python: bool = False,
) -> LocalServer:
    """The service over `paths`, ready to serve on this machine. Raises ServeError with the
    CLI's message when a pipeline cannot be opened."""
    from runner.render import describe_error
    from runner.serve.errors import ServiceError
    from runner.serve.service import Service

    try:
        service = Service.open(
            paths, state=state, llm_override=llm_override, allow_python=allow_python
        )
    except ServiceError as exc:
        raise ServeError(exc.message) from exc
    except Exception as exc:
        raise ServeError(describe_error(exc)) from exc
    return LocalServer(service, port)
