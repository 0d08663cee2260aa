"""The native API's streamed rounds: server-sent events of a round's progress and of the answer as
the model writes it (the round runs in a `runner.service.streams.RoundStream`).

POST /v1/pipelines/{domain}/rounds/stream   {message, session_id?, request_id?}

answers `text/event-stream` events: `progress` (a task started or ended, a coordinator split a
task, a tool ran or failed, a retrieval returned pages, a question was asked), `delta` (`{"text":
…}`, the answer's next piece), then `result` (the round's result, as the rounds endpoint
returns it: its `answer` is the whole answer, what the deltas showed and the rest) or `error`.
The OpenAI-compatible API streams the same rounds as `chat.completion.chunk`s (openai_api.py).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import BaseRoute, Route

from runner.service.streams import (
    SSE_HEADERS,
    SSE_MEDIA_TYPE,
    RoundStream,
    ending_with_error,
    sse,
)

if TYPE_CHECKING:
    from runner.service.pipelines import Service


def routes(service: Service, max_body_bytes: int) -> list[BaseRoute]:
    from runner.serve.native import round_request
    from runner.service.principals import client_of

    async def stream_round(request: Request) -> Response:
        message, session_id, request_id = await round_request(request, max_body_bytes)
        domain = request.path_params["domain"]
        service.runtime(domain)  # an unknown pipeline is a 404 before the stream starts
        client = client_of(request)
        stream = RoundStream(
            lambda watch: service.run_round(
                domain,
                message,
                session_id=session_id,
                request_id=request_id,
                client=client,
                create=False,
                watch=watch,
            ),
            service.redactor,
        )
        return sse_response(_native_events(stream))

    return [Route("/v1/pipelines/{domain}/rounds/stream", stream_round, methods=["POST"])]


def sse_response(events: AsyncIterator[str], error_event: str | None = "error") -> Response:
    """The events as a `text/event-stream`; a stream that fails on the way ends with an error
    event (named `error_event`), never cut off without one."""
    return StreamingResponse(
        ending_with_error(events, error_event), media_type=SSE_MEDIA_TYPE, headers=SSE_HEADERS
    )


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
