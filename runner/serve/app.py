"""The Starlette application: `create_app(service, ...)`.

Routes: the native API (`/v1/pipelines…`, `/v1/sessions…`), the OpenAI-compatible API
(`/v1/chat/completions`, `/v1/models`), `/healthz`, `/readyz` and `/metrics`. Every route but
the health checks (and the `public` paths of extra routes) needs a bearer token when the
service has any; a token is a client, and a client reaches only what it made
(runner.service.principals). Only the `allowed_hosts` are answered, and every response carries
the security headers (runner.serve.hosts). Errors are JSON: `{"error": {"message", "type",
"param", "code"}}` (`code` a string), the message being what the CLI says, without credentials
or paths (runner.text.redact).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.requests import HTTPConnection, Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Route

from runner.serve.auth import TokenBackend
from runner.serve.config import DEFAULTS
from runner.serve.connections import BodyDeadline, McpGuard
from runner.serve.hosts import LOOPBACK_NAMES, SecurityHeaders, TrustedHosts, check_host_names
from runner.serve.http import error_response, log
from runner.service.errors import NotFound, ServiceError, Unauthorized, as_service_error
from runner.service.failures import log_unexpected
from runner.service.principals import Tokens, under

if TYPE_CHECKING:
    from runner.service.pipelines import Service

PUBLIC_PATHS = ("/healthz", "/readyz")
PRUNE_EVERY_S = 3600.0


def create_app(
    service: Service,
    *,
    tokens: Sequence[str] = (),
    max_body_bytes: int = DEFAULTS.max_body_bytes,
    drain_timeout_s: float = DEFAULTS.drain_timeout_s,
    extra_routes: Sequence[BaseRoute] = (),
    public_prefixes: Sequence[str] = (),
    cookie_prefixes: Sequence[str] = (),
    login_path: str | None = None,
    allowed_hosts: Sequence[str] = LOOPBACK_NAMES,
    body_timeout_s: float = DEFAULTS.body_timeout_s,
    session_ttl_s: float | None = None,
    metrics: bool = True,
    close_service: bool = True,
) -> Starlette:
    """The ASGI app serving `service`. `extra_routes` are mounted beside the API (the
    playground's); paths under `public_prefixes` need no token, those under `cookie_prefixes`
    may carry it in the login cookie, and a page there without one is sent to `login_path`.
    Requests naming a Host not in `allowed_hosts` get a 400 (ValueError for a name no Host
    could match: runner.serve.hosts.host_name_problem); a body must arrive within
    `body_timeout_s`. With `session_ttl_s`, sessions idle longer are deleted at start and
    then every hour (or TTL, when shorter). On shutdown the app waits up to
    `drain_timeout_s` for rounds in flight, then closes the service (`close_service`)."""
    from runner.serve import native, openai_api, streaming
    from runner.serve.tracecontext import TraceContext

    check_host_names(allowed_hosts)  # now: the middleware is built at the first request

    exporter = None
    if metrics:
        from runner.serve.metrics import Metrics

        exporter = Metrics.install(service)

    async def health(_request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def ready(_request: Request) -> Response:
        report = service.readiness()
        return JSONResponse(report, status_code=200 if report["ready"] else 503)

    async def metrics_page(_request: Request) -> Response:
        if exporter is None:
            raise NotFound("metrics are off in this service")
        body, content_type = exporter.render()
        return Response(body, media_type=content_type)

    routes: list[BaseRoute] = [
        Route("/healthz", health),
        Route("/readyz", ready),
        Route("/metrics", metrics_page),
        *native.routes(service, max_body_bytes),
        *streaming.routes(service, max_body_bytes),
        *openai_api.routes(service, max_body_bytes),
        *extra_routes,
    ]

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        pruning = None
        if session_ttl_s is not None:
            pruning = asyncio.create_task(prune_sessions(service, session_ttl_s))
        yield
        if pruning is not None:
            pruning.cancel()
        await service.drain(drain_timeout_s)
        if close_service:
            service.close()

    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        exception_handlers={
            ServiceError: _service_error,
            HTTPException: _http_error,
            Exception: _internal_error,
        },
    )
    backend = TokenBackend(
        Tokens(
            list(tokens),
            public=(*PUBLIC_PATHS, *public_prefixes),
            cookie_prefixes=cookie_prefixes,
            key=service.client_key() if tokens else b"",
        )
    )

    def refused(conn: HTTPConnection, exc: Exception) -> Response:
        if login_path is not None and under(conn.url.path, cookie_prefixes):
            return RedirectResponse(login_path, 303)
        return error_response(Unauthorized(str(exc)), {"WWW-Authenticate": "Bearer"})

    # the last added runs first: headers on every response, then the Host, then the token,
    # then the caller's trace context around the route
    app.add_middleware(TraceContext)
    app.add_middleware(AuthenticationMiddleware, backend=backend, on_error=refused)
    app.add_middleware(McpGuard)  # /mcp, mounted later by runner.cli.webapp
    app.add_middleware(TrustedHosts, allowed_hosts=list(allowed_hosts))
    app.add_middleware(BodyDeadline, timeout_s=body_timeout_s)  # every route's body
    app.add_middleware(SecurityHeaders)
    app.state.service = service
    app.state.body_timeout_s = body_timeout_s
    return app


async def prune_sessions(service: Service, ttl_s: float) -> None:
    """Delete the sessions idle past `ttl_s`, now and then at intervals, for the app's life."""
    while True:
        try:
            pruned = await service.prune(ttl_s)
            if pruned:
                log.info("runner serve: deleted %d session(s) idle for over %g s", pruned, ttl_s)
        except Exception as exc:  # the store is down: the next pass tries again
            log.warning("runner serve: could not delete old sessions: %s", as_service_error(exc))
        await asyncio.sleep(min(ttl_s, PRUNE_EVERY_S))


async def _service_error(_request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ServiceError)
    return error_response(exc)


async def _http_error(_request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    error = ServiceError(str(exc.detail))
    error.status = exc.status_code
    error.kind = "not_found_error" if exc.status_code == 404 else "invalid_request_error"
    error.code = {404: "not_found", 405: "method_not_allowed"}.get(
        exc.status_code, "invalid_request"
    )
    return error_response(error)


async def _internal_error(request: Request, exc: Exception) -> Response:
    log_unexpected(f"{request.method} {request.url.path}", exc)
    return error_response(as_service_error(exc))


__all__ = ["create_app"]
