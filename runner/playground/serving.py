"""Serving the playground: its routes in `runner serve`'s app (`--playground`), and the local
server of `runner playground`.

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
            "the playground has no login of its own and is not served with bearer tokens: "
            "serve it on 127.0.0.1 without tokens (`runner playground PIPELINE`), or serve the "
            "API alone"
        )
    from runner.playground.routes import routes

    return routes(service), PREFIX


def serve_locally(
    paths: Sequence[str | Path],
    *,
    port: int,
    started: Callable[[str], None],
    state: str | None = None,
    llm_override: str | None = None,
    allow_python: bool = False,
) -> None:
    """`runner serve PATHS --playground` on 127.0.0.1:`port` until interrupted; `started(url)`
    once the socket listens (port 0: on the port the system chose). Raises ServeError with
    the CLI's message when a pipeline cannot be opened."""
    try:
        import starlette  # noqa: F401
        import uvicorn
    except ModuleNotFoundError as exc:
        raise ServeError(
            f"the playground needs the web server packages ({exc.name} is missing): "
            "pip install 'runner[playground]'"
        ) from None

    from runner.render import describe_error
    from runner.serve.config import ServeSettings, build_app

    settings = ServeSettings(
        paths=[str(path) for path in paths],
        state=state,
        llm=llm_override,
        allow_python=allow_python,
        playground=True,
    )
    try:
        app = build_app(settings)
    except Exception as exc:
        raise ServeError(getattr(exc, "message", None) or describe_error(exc)) from exc

    class Server(uvicorn.Server):
        async def startup(self, sockets: Any = None) -> None:
            await super().startup(sockets)
            if self.servers and self.servers[0].sockets:
                bound = self.servers[0].sockets[0].getsockname()[1]
                started(f"http://{LOCAL_HOST}:{bound}{PREFIX}/")

    server = Server(uvicorn.Config(app, host=LOCAL_HOST, port=port, log_level="warning"))
    try:
        server.run()
    except SystemExit:  # uvicorn's way of saying it could not start (it logged why)
        if server.started:
            raise
        raise ServeError(
            f"could not listen on {LOCAL_HOST}:{port} (in use?): choose another port with "
            "--port, or --port 0 for any free one"
        ) from None
