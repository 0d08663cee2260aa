"""The OpenAI-compatible API: `POST /v1/chat/completions` and `GET /v1/models`.

A model is a domain. The conversation is a session, named by the `X-Runner-Session` header
(an id the service gave this client), else by the request's `user` field (a session of that
name in the client's own namespace, started when new), else new on every call; the session id
comes back in the `X-Runner-Session` response header and in the `runner` field. Only the last
user message is sent to the pipeline: the session remembers the rest (its pending question
included).

The reply's content is the answer with its sources listed at the end (or the clarifying
question, or what failed); the extra `runner` field is the whole `runner run --json` result,
sources and outcome included. `stream: true` sends the answer as the model writes it, as
server-sent `chat.completion.chunk`s, and the `runner` result in the finishing chunk
(`stream_options.include_usage` adds the usage chunk). Fields runner cannot honour (`n` > 1,
`tools`, `response_format`, …) are refused, never ignored (openai_fields.py). `GET
/v1/models/{id}` is a model (a domain); the Responses API is a 404 that says what is served.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator, Awaitable
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from runner.render import rest_of
from runner.serve.http import optional_text, read_json, request_id_of
from runner.serve.openai_fields import checked_fields
from runner.serve.streaming import sse_response
from runner.service.errors import BadRequest, NotFound
from runner.service.principals import client_of
from runner.service.streams import RoundStream, sse

if TYPE_CHECKING:
    from runner.app import RoundWatch
    from runner.service.pipelines import Service

SESSION_HEADER = "X-Runner-Session"
CHUNK_CHARS = 80


def routes(service: Service, max_body_bytes: int) -> list[BaseRoute]:
    async def chat_completions(request: Request) -> Response:
        data = await read_json(request, max_body_bytes)
        domain = _model(data, service)
        streaming = checked_fields(data)
        message = _last_user_message(data)
        client = client_of(request)
        header = request.headers.get(SESSION_HEADER)
        user = optional_text(data, "user") or None  # "" names no session
        # the header names a session the service gave; `user`, one of the client's own
        # namespace, started when new
        session_id = header if header is not None or user is None else client.user_session(user)
        request_id = request_id_of(request, data)

        def round_(watch: RoundWatch | None = None) -> Awaitable[dict[str, Any]]:
            return service.run_round(
                domain,
                message,
                session_id=session_id,
                request_id=request_id,
                client=client,
                create=header is None,
                watch=watch,
            )

        if streaming.stream:
            stream = RoundStream(round_, service.redactor)
            return sse_response(_chunks(stream, domain, streaming.include_usage), None)
        result = await round_()
        return JSONResponse(
            completion(result, domain), headers={SESSION_HEADER: str(result["session"])}
        )

    async def models(_request: Request) -> Response:
        return JSONResponse(
            {"object": "list", "data": [_model_object(domain) for domain in service.runtimes]}
        )

    async def model(request: Request) -> Response:
        domain = request.path_params["model"]
        if domain not in service.runtimes:
            known = ", ".join(sorted(service.runtimes)) or "none"
            raise NotFound(
                f"no pipeline {domain!r} is served here (domains: {known}): a model is a "
                "served pipeline's domain",
                param="model",
                code="model_not_found",
            )
        return JSONResponse(_model_object(domain))

    async def responses(_request: Request) -> Response:
        raise NotFound(
            "the Responses API (/v1/responses) is not served here: this service speaks the Chat "
            "Completions API (POST /v1/chat/completions, GET /v1/models) and runner's own "
            "(POST /v1/pipelines/{domain}/rounds)",
            code="unknown_url",
        )

    return [
        Route("/v1/chat/completions", chat_completions, methods=["POST"]),
        Route("/v1/models", models),
        Route("/v1/models/{model:path}", model),
        Route("/v1/responses", responses, methods=["GET", "POST"]),
        Route("/v1/responses/{rest:path}", responses, methods=["GET", "POST", "DELETE"]),
    ]


def _model_object(domain: str) -> dict[str, Any]:
    return {"id": domain, "object": "model", "created": 0, "owned_by": "runner"}


def completion(result: dict[str, Any], model: str) -> dict[str, Any]:
    """A `chat.completion` object for a round's result."""
    return {
        "id": _completion_id(result),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": message_text(result)},
                "finish_reason": "stop",
            }
        ],
        "usage": _usage(result),
        "runner": result,
    }


def message_text(result: dict[str, Any]) -> str:
    """What a chat front end shows: the answer and its sources, the question, or the error."""
    from runner.render import source_label

    if result["outcome"] == "clarification":
        return str(result.get("question") or "")
    if result["outcome"] == "error":
        return f"The pipeline could not answer: {result.get('error') or 'unknown error'}"
    text = str(result.get("answer") or "")
    sources = result.get("sources") or []
    if sources:
        listed = "\n".join(f"[{n}] {source_label(s)}" for n, s in enumerate(sources, 1))
        text += f"\n\nSources:\n{listed}"
    return text


async def _chunks(
    stream: RoundStream, model: str, include_usage: bool = False
) -> AsyncIterator[str]:
    """The round as `chat.completion.chunk`s: the answer's pieces as the model writes them,
    then what they did not carry of the message (the sources listed, or the whole question
    or error), and a finishing chunk with the `runner` result (its sources). With
    `include_usage`, as the API defines it: every chunk has `"usage": null`, and one more,
    last, has `choices: []` and the round's usage."""
    created = int(time.time())
    ident = f"chatcmpl-{uuid.uuid4().hex[:24]}"

    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> str:
        body = {
            **_head(ident, created, model),
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            **({"usage": None} if include_usage else {}),
            **extra,
        }
        return sse(body)

    yield chunk({"role": "assistant", "content": ""})
    shown = ""
    async for kind, value in stream.items():
        if kind == "keepalive":
            yield ": still working\n\n"
        elif kind == "delta":
            shown += value
            yield chunk({"content": value})
    result, error = await stream.outcome()
    if result is None:
        yield sse(error)
    else:
        rest = rest_of(shown, message_text(result))
        for start in range(0, len(rest), CHUNK_CHARS):
            yield chunk({"content": rest[start : start + CHUNK_CHARS]})
        yield chunk({}, "stop", runner=result)
        if include_usage:
            yield sse({**_head(ident, created, model), "choices": [], "usage": _usage(result)})
    yield "data: [DONE]\n\n"


def _head(ident: str, created: int, model: str) -> dict[str, Any]:
    return {"id": ident, "object": "chat.completion.chunk", "created": created, "model": model}


def _model(data: dict[str, Any], service: Service) -> str:
    model = data.get("model")
    if not isinstance(model, str) or not model:
        known = ", ".join(sorted(service.runtimes))
        raise BadRequest(f"`model` must name a served pipeline's domain ({known})")
    if model not in service.runtimes:
        known = ", ".join(sorted(service.runtimes))
        raise NotFound(
            f"no pipeline {model!r} is served here (domains: {known}): a model is a served "
            "pipeline's domain",
            param="model",
            code="model_not_found",
        )
    return model


def _last_user_message(data: dict[str, Any]) -> str:
    messages = data.get("messages")
    if not isinstance(messages, list) or not messages:
        raise BadRequest("`messages` must be a non-empty list of {role, content} objects")
    for entry in reversed(messages):
        if isinstance(entry, dict) and entry.get("role") == "user":
            return _text_content(entry.get("content"))
    raise BadRequest("`messages` has no message with role `user`")


def _text_content(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # [{"type": "text", "text": …}, …]
        parts = [
            p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text"
        ]
        if parts and all(isinstance(part, str) for part in parts):
            return "\n".join(parts)
    raise BadRequest("a user message's `content` must be text (a string or text parts)")


def _usage(result: dict[str, Any]) -> dict[str, int]:
    stats = result.get("stats") or {}
    prompt = int(stats.get("prompt_tokens", 0))
    completion_tokens = int(stats.get("completion_tokens", 0))
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt + completion_tokens,
    }


def _completion_id(result: dict[str, Any]) -> str:
    return f"chatcmpl-{result['session']}-{result['round']}"
