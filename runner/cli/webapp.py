"""The web faces composed: the service's API with the playground mounted when asked.

The one place that knows both `runner.serve` and `runner.playground`, so that neither imports the
other: `runner serve` builds its app here (and each `--workers N` process imports
`runner.cli.webapp:worker_app`), and `runner playground` serves it on 127.0.0.1.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from runner.playground import PREFIX
from runner.playground.serving import PLAYGROUND_STORE, ServeError
from runner.serve.config import ServeSettings

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from runner.service.pipelines import Service

LOCAL_HOST = "127.0.0.1"


def build_app(settings: ServeSettings) -> Starlette:
    from runner.cli.streamed import start_observability
    from runner.serve.hosts import allowed_hosts
    from runner.service.pipelines import Service, ServiceLimits

    start_observability()  # in each worker process: every worker reports its own rounds
    # without tokens the playground never opens the production store unless told to
    sandboxed = settings.playground and not settings.tokens and not settings.state
    service = Service.open(
        [Path(p) for p in settings.paths],
        state=settings.state,
        store_file=PLAYGROUND_STORE if sandboxed else None,
        limits=ServiceLimits(
            max_message_chars=settings.max_message_chars,
            lock_wait_s=settings.lock_wait_s,
            max_rounds_in_flight=settings.max_rounds_in_flight,
            max_rounds_per_client=settings.max_rounds_per_client,
        ),
        llm_override=settings.llm,
        allow_python=settings.allow_python,
        build_indexes=settings.build,
    )
    app = compose(
        service,
        tokens=settings.tokens,
        playground=settings.playground,
        secret=settings.secret.encode() or secrets.token_bytes(32),
        allowed=allowed_hosts(settings.host, settings.allowed_hosts),
        max_body_bytes=settings.max_body_bytes,
        drain_timeout_s=settings.drain_timeout_s,
        session_ttl_s=settings.session_ttl_s,
        body_timeout_s=settings.body_timeout_s,
    )
    if settings.mcp:
        from runner.serve.mcp_tools import mount

        mount(app, service, tokens=bool(settings.tokens), max_body_bytes=settings.max_body_bytes)
    return app


def compose(
    service: Service,
    *,
    tokens: Sequence[str] = (),
    playground: bool = True,
    secret: bytes = b"",
    allowed: Sequence[str] | None = None,
    **options: Any,
) -> Starlette:
    """The app of `service`, the playground mounted when asked (tests compose it too)."""
    from runner.serve.app import create_app
    from runner.serve.hosts import LOOPBACK_NAMES

    extra: dict[str, Any] = {}
    if playground:
        from runner.playground.evals import eval_routes
        from runner.playground.serving import playground_routes

        mounted = playground_routes(service, tokens, secret=secret or secrets.token_bytes(32))
        extra = {
            # the evaluations' pages first: the playground's mount answers every path under it
            "extra_routes": [*eval_routes(service), *mounted.routes],
            "public_prefixes": mounted.public,
            "cookie_prefixes": mounted.cookie_prefixes,
            "login_path": mounted.login_path,
        }
    return create_app(
        service,
        tokens=tokens,
        allowed_hosts=list(allowed) if allowed is not None else list(LOOPBACK_NAMES),
        **extra,
        **options,
    )


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
    tokens: Sequence[str] = (),
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
        tokens=list(tokens),
        host=LOCAL_HOST,
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
