"""W3C trace context: a request's `traceparent` (and `tracestate`) make the rounds it runs
children of the caller's trace in OpenTelemetry (runner.observability.within_trace). A plain
ASGI middleware: a request without the headers passes untouched."""

from __future__ import annotations

from typing import Any

from runner.observability import PROPAGATED_HEADERS, within_trace

_WANTED = frozenset(name.encode() for name in PROPAGATED_HEADERS)


class TraceContext:
    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        found = {
            name.decode(): value.decode("latin-1")
            for name, value in scope.get("headers", ())
            if name in _WANTED
        }
        if not found:
            await self.app(scope, receive, send)
            return
        with within_trace(found):
            await self.app(scope, receive, send)
