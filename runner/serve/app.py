"""The Starlette application: `create_app(service, ...)`.

Routes: the native API (`/v1/pipelines…`, `/v1/sessions…`), the OpenAI-compatible API
(`/v1/chat/completions`, `/v1/models`), `/healthz`, `/readyz` and `/metrics`. Every route but
the health checks (and the `public` paths of extra routes) needs a bearer token when the
service has any. Errors are JSON: `{"error": {"message", "type", "code"}}`, the message being
what the CLI says.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from runner.serve.errors import NotFound, ServiceError, as_service_error
from runner.serve.http import (
    DEFAULT_MAX_BODY_BYTES,
    check_token,
    error_response,
)

if TYPE_CHECKING:
    from runner.serve.service import Service

PUBLIC_PATHS = ("/healthz", "/readyz")


def create_app(
    service: Service,
    *,
    tokens: Sequence[str] = (),
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    drain_timeout_s: float = 30.0,
    extra_routes: Sequence[BaseRoute] = (),
    public_prefixes: Sequence[str] = (),
    metrics: bool = True,
    close_service: bool = True,
) -> Starlette:
    """The ASGI app serving `service`. `extra_routes` are mounted beside the API (the
    playground's); paths under `public_prefixes` need no token. On shutdown the app waits up
    to `drain_timeout_s` for rounds in flight, then closes the service (`close_service`)."""
    from runner.serve import native, openai_api, streaming
    from runner.serve.tracecontext import TraceContext

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
        yield
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
    public = (*PUBLIC_PATHS, *public_prefixes)
    app.add_middleware(_Authenticate, tokens=list(tokens), public=public)
    app.add_middleware(TraceContext)
    app.state.service = service
    return app


class _Authenticate:
    """Bearer tokens on every path but the public ones (a plain ASGI middleware: it adds
    nothing to a request that passes but the check)."""

    def __init__(self, app: Any, tokens: list[str], public: Sequence[str]) -> None:
        self.app = app
        self.tokens = tokens
        self.public = public

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and self.tokens and not self._public(scope["path"]):
            try:
                check_token(Request(scope), self.tokens)
            except ServiceError as error:
                response = error_response(error, {"WWW-Authenticate": "Bearer"})
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)

    def _public(self, path: str) -> bool:
        return any(path == p or path.startswith(p.rstrip("/") + "/") for p in self.public)


async def _service_error(_request: Request, exc: Exception) -> Response:
    assert isinstance(exc, ServiceError)
    return error_response(exc)


async def _http_error(_request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    error = ServiceError(str(exc.detail))
    error.status = exc.status_code
    error.kind = "not_found_error" if exc.status_code == 404 else "invalid_request_error"
    return error_response(error)


async def _internal_error(_request: Request, exc: Exception) -> Response:
    return error_response(as_service_error(exc))


__all__ = ["create_app"]
