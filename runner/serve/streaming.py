"""Rounds streamed as they run: server-sent events of their progress and of the answer as the
model writes it.

`RoundStream` runs one round (`Service.run_round`) as an asyncio task of its own, watched
(`runner.app.watching`): each trace event worth showing and each piece of the answer is queued
for the response, which sends them as they come. A client that leaves mid-stream leaves the
round running: it finishes and is stored, as if the client had waited.

POST /v1/pipelines/{domain}/rounds/stream   {message, session_id?, request_id?}

answers `text/event-stream` events: `progress` (a task started or ended, a coordinator split a
task, a tool ran or failed, a retrieval returned pages, a question was asked), `delta` (`{"text":
…}`, the answer's next piece), then `result` (the round's result, as the rounds endpoint
returns it: its `answer` is the whole answer, what the deltas showed and the rest) or `error`.
The OpenAI-compatible API streams the same rounds as `chat.completion.chunk`s (openai_api.py).
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import BaseRoute, Route

from runner.serve.errors import as_service_error

if TYPE_CHECKING:
    from runner.serve.service import Service

KEEPALIVE_S = 10.0  # an SSE comment while a round is quiet, so that proxies keep the stream open
# The trace events sent as progress, and the fields of each that are sent (no page lists: a
# retrieval says how many pages it found).
PROGRESS: dict[str, tuple[str, ...]] = {
    "task.start": ("prompt", "depth", "owner"),
    "task.end": ("status",),
    "coordinator.run": ("coordinator", "subtasks"),
    "tool.run": ("tool", "reason", "result"),
    "tool.error": ("tool", "reason", "error"),
    "retrieval": ("tool", "corpus", "query"),
    "clarification.ask": ("tool", "question"),
    "terminal": ("tool",),
}

Item = tuple[str, Any]  # ("progress", {...}) | ("delta", text) | ("keepalive", None)


class RoundStream:
    """One round running in its own task, and what it told while it ran, in order."""

    def __init__(self, start: Callable[[], Awaitable[dict[str, Any]]]) -> None:
        from runner.app import RoundWatch, watching

        self._queue: asyncio.Queue[Item | None] = asyncio.Queue()
        self._loop = asyncio.get_running_loop()
        self._thread = threading.get_ident()
        with watching(RoundWatch(on_event=self._event, on_delta=self._delta)):
            self.task = asyncio.ensure_future(start())  # the watch goes with the task's context
        self.task.add_done_callback(self._ended)

    async def items(self) -> AsyncIterator[Item]:
        """What the round tells, as it tells it, until it ends; a keep-alive when it is quiet."""
        while True:
            try:
                item = await asyncio.wait_for(self._queue.get(), KEEPALIVE_S)
            except asyncio.TimeoutError:
                yield ("keepalive", None)
                continue
            if item is None:
                return
            yield item

    async def outcome(self) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        """The round's result, or the error it ended with (as JSON: `{"error": {…}}`)."""
        try:
            return await self.task, None
        except Exception as exc:
            return None, as_service_error(exc).to_json()

    def _event(self, event: str, task: str | None, fields: Mapping[str, Any]) -> None:
        shown = PROGRESS.get(event)
        if shown is not None:
            detail = {name: fields[name] for name in shown if name in fields}
            if event == "retrieval":
                detail["pages"] = len(fields.get("pages") or ())
            self._put(("progress", {"event": event, "task": task, **detail}))

    def _delta(self, text: str) -> None:
        self._put(("delta", text))

    def _put(self, item: Item | None) -> None:
        """Queued for the response; from a thread a tool started, through the event loop."""
        if threading.get_ident() == self._thread:
            self._queue.put_nowait(item)
        else:
            self._loop.call_soon_threadsafe(self._queue.put_nowait, item)

    def _ended(self, task: asyncio.Future[Any]) -> None:
        if not task.cancelled():
            task.exception()  # retrieved here: a client that left never awaits it
        self._put(None)


def sse(data: Any, event: str | None = None) -> str:
    """One server-sent event."""
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(data, ensure_ascii=False)}\n\n"


def sse_response(events: AsyncIterator[str]) -> Response:
    return StreamingResponse(
        events,
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


def routes(service: Service, max_body_bytes: int) -> list[BaseRoute]:
    from runner.serve.native import round_request
    from runner.serve.principals import client_of

    async def stream_round(request: Request) -> Response:
        message, session_id, request_id = await round_request(request, max_body_bytes)
        domain = request.path_params["domain"]
        service.runtime(domain)  # an unknown pipeline is a 404 before the stream starts
        client = client_of(request)
        stream = RoundStream(
            lambda: service.run_round(
                domain,
                message,
                session_id=session_id,
                request_id=request_id,
                client=client,
                create=False,
            )
        )
        return sse_response(_native_events(stream))

    return [Route("/v1/pipelines/{domain}/rounds/stream", stream_round, methods=["POST"])]


async def _native_events(stream: RoundStream) -> AsyncIterator[str]:
    async for kind, value in stream.items():
        if kind == "keepalive":
            yield ": still working\n\n"
        elif kind == "delta":
            yield sse({"text": value}, "delta")
        else:
            yield sse(value, kind)
    result, error = await stream.outcome()
    yield sse(result, "result") if error is None else sse(error, "error")
