"""The web faces composed: the service's API with the playground mounted when asked.

The one place that knows both `runner.serve` and `runner.playground`, so that neither imports the
other: `runner serve` builds its app here (and each `--workers N` process imports
`runner.cli.webapp:worker_app`), and `runner playground` serves it on 127.0.0.1.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from runner.playground import PREFIX
from runner.playground.serving import ServeError
from runner.serve.config import ServeSettings

if TYPE_CHECKING:
    from starlette.applications import Starlette

LOCAL_HOST = "127.0.0.1"


def build_app(settings: ServeSettings) -> Starlette:
    from runner.serve.app import create_app
    from runner.serve.service import Limits, Service

    service = Service.open(
        [Path(p) for p in settings.paths],
        state=settings.state,
        limits=Limits(
            max_message_chars=settings.max_message_chars, lock_wait_s=settings.lock_wait_s
        ),
        llm_override=settings.llm,
        allow_python=settings.allow_python,
        build_indexes=settings.build,
    )
    extra_routes, public = [], []
    if settings.playground:
        from runner.playground.serving import playground_routes

        routes, prefix = playground_routes(service, settings.tokens)
        extra_routes, public = routes, [prefix]
    app = create_app(
        service,
        tokens=settings.tokens,
        max_body_bytes=settings.max_body_bytes,
        drain_timeout_s=settings.drain_timeout_s,
        extra_routes=extra_routes,
        public_prefixes=public,
    )
    if settings.mcp:
        from runner.serve.mcp_tools import mount

        mount(app, service, tokens=bool(settings.tokens), max_body_bytes=settings.max_body_bytes)
    return app


def worker_app() -> Starlette:
    """The app of one worker process (uvicorn's factory with --workers N)."""
    return build_app(ServeSettings.from_env())


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
