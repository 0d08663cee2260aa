"""Rounds streamed as they run: server-sent events of their progress and of the answer as the
model writes it.

`RoundStream` runs one round (`Service.run_round`) as an asyncio task of its own, handing it the
watch (`runner.app.RoundWatch`) the round reports to: each trace event worth showing and each piece
of the answer is queued for the response, which sends them as they come. A client that leaves mid-
stream leaves the round running: it finishes and is stored, as if the client had waited. The events
are text (`sse`); each face sends them with its framework's streaming response
(runner.serve.streaming).
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from runner.service.errors import as_service_error
from runner.text.redact import ERRORS, Redactor

if TYPE_CHECKING:
    from runner.app import RoundWatch

log = logging.getLogger("runner.serve")
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

    def __init__(
        self,
        start: Callable[[RoundWatch], Awaitable[dict[str, Any]]],
        redactor: Redactor = ERRORS,
    ) -> None:
        from runner.app import RoundWatch

        self._redactor = redactor  # every event goes out through it, as the result does
        self._queue: asyncio.Queue[Item | None] = asyncio.Queue()
        self._loop = asyncio.get_running_loop()
        self._thread = threading.get_ident()
        watch = RoundWatch(on_event=self._event, on_delta=self._delta)
        self.task = asyncio.ensure_future(start(watch))
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
            return None, self._redactor.json(as_service_error(exc).to_json())

    def _event(self, event: str, task: str | None, fields: Mapping[str, Any]) -> None:
        shown = PROGRESS.get(event)
        if shown is not None:
            detail = {name: fields[name] for name in shown if name in fields}
            if event == "retrieval":
                detail["pages"] = len(fields.get("pages") or ())
            progress = {"event": event, "task": task, **detail}
            self._put(("progress", self._redactor.json(progress)))

    def _delta(self, text: str) -> None:
        self._put(("delta", self._redactor.text(text)))

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
    """One server-sent event (a string that UTF-8 cannot hold, a lone surrogate, escaped)."""
    head = f"event: {event}\n" if event else ""
    text = json.dumps(data, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(data)
    return f"{head}data: {text}\n\n"


SSE_MEDIA_TYPE = "text/event-stream"
SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


async def ending_with_error(events: AsyncIterator[str], event: str | None) -> AsyncIterator[str]:
    """The events, and an error event (named `event`) if they fail on the way: a stream is
    never cut off without one."""
    try:
        async for item in events:
            yield item
    except Exception as exc:
        log.exception("runner serve: a stream failed")
        yield sse(ERRORS.json(as_service_error(exc).to_json()), event)
