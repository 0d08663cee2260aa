"""Plain-text refusals of a wrapped ASGI app (the MCP SDK's, on /mcp) leave in the service's
JSON error shape; JSON answers and successes pass as they are."""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.responses import JSONResponse, PlainTextResponse
from starlette.routing import Route
from starlette.testclient import TestClient

from runner.serve.json_refusals import JsonRefusals


def app_answering(response):  # type: ignore[no-untyped-def]
    async def endpoint(request):  # type: ignore[no-untyped-def]
        return response

    return TestClient(JsonRefusals(Starlette(routes=[Route("/", endpoint)])))


def test_a_plain_text_refusal_becomes_the_services_json_error() -> None:
    got = app_answering(PlainTextResponse("Invalid Origin header", status_code=403)).get("/")
    assert got.status_code == 403
    assert got.json() == {
        "error": {
            "message": "Invalid Origin header",
            "type": "permission_error",
            "param": None,
            "code": "forbidden",
        }
    }


def test_a_json_refusal_passes_as_it_is() -> None:
    body = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32600, "message": "no"}}
    got = app_answering(JSONResponse(body, status_code=400)).get("/")
    assert got.json() == body


def test_a_success_passes_as_it_is() -> None:
    assert app_answering(PlainTextResponse("fine")).get("/").text == "fine"
