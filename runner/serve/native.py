"""The native API: rounds, sessions and pipelines, as `runner run --json` gives them.

POST /v1/pipelines/{domain}/rounds   {message, session_id?, request_id?} -> the result
POST /v1/pipelines/{domain}/rounds/stream   the same, as server-sent events (streaming.py)
GET  /v1/pipelines                   -> {"pipelines": [{domain, description, tools, corpora}]}
GET  /v1/sessions/{id}?before=&limit= -> its status, pending question and newest rounds
GET  /v1/sessions/{id}/rounds/{n}    -> one round's message, result and trace

A client continues and reads only the sessions the service gave it (another id is a 404).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from runner.serve.http import optional_text, read_json, request_id_of
from runner.service.errors import BadRequest
from runner.service.principals import client_of

if TYPE_CHECKING:
    from runner.service.pipelines import Service


def routes(service: Service, max_body_bytes: int) -> list[BaseRoute]:
    async def post_round(request: Request) -> Response:
        message, session_id, request_id = await round_request(request, max_body_bytes)
        result = await service.run_round(
            request.path_params["domain"],
            message,
            session_id=session_id,
            request_id=request_id,
            client=client_of(request),
            create=False,
        )
        return JSONResponse(result)

    async def get_pipelines(_request: Request) -> Response:
        return JSONResponse({"pipelines": service.pipelines()})

    async def get_session(request: Request) -> Response:
        query = request.query_params
        summary = await service.off_loop(
            lambda: service.session(
                request.path_params["session_id"],
                client_of(request),
                before=_number(query.get("before"), "before"),
                limit=_number(query.get("limit"), "limit"),
            )
        )
        return JSONResponse(summary)

    async def get_round(request: Request) -> Response:
        params = request.path_params
        stored = await service.off_loop(
            lambda: service.round(params["session_id"], params["number"], client_of(request))
        )
        return JSONResponse(stored)

    return [
        Route("/v1/pipelines/{domain}/rounds", post_round, methods=["POST"]),
        Route("/v1/pipelines", get_pipelines),
        Route("/v1/sessions/{session_id}", get_session),
        Route("/v1/sessions/{session_id}/rounds/{number:int}", get_round),
    ]


def _number(value: str | None, name: str) -> int | None:
    if value is None:
        return None
    if not value.isdigit() or int(value) < 1:
        raise BadRequest(f"`{name}` must be a whole number from 1")
    return int(value)


async def round_request(
    request: Request, max_body_bytes: int
) -> tuple[str, str | None, str | None]:
    """A round's body: the message, the session id and the request id (also its header)."""
    data = await read_json(request, max_body_bytes)
    message = data.get("message")
    if not isinstance(message, str):
        raise BadRequest("the body needs `message`, a string: the user's message")
    return message, optional_text(data, "session_id"), request_id_of(request, data)
