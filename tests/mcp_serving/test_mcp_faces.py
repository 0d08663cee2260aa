"""The MCP faces as the ecosystem's clients meet them (issue 32.3), through the official SDK's
client over both transports (`runner serve --mcp` and `runner mcp serve`): argument errors in
the tool's own words, unknown arguments refused, the service's JSON error on every refusal,
and only tools advertised."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest

from .conftest import TOKEN
from .test_mcp_serve_stdio import over_stdio
from .test_serve_mcp import call

CASES = [
    ({}, "question", "the argument `question` is missing"),
    ({"question": 42}, "question", "must be a text (a JSON string), not a number"),
    ({"question": "hi", "session_id": 7}, "session_id", "`session_id` must be a text"),
    ({"question": "hi", "sesion_id": "x"}, "sesion_id", "did you mean `session_id`?"),
    ({"question": "hi", "verbose": True}, "verbose", "unknown argument `verbose`"),
]


@pytest.fixture(params=["http", "stdio"])
def face(request: pytest.FixtureRequest, served: Any, shop: Any) -> Any:
    """Run `work(client)` with the SDK's client on one transport."""
    if request.param == "http":
        return lambda work: call(served, work)
    return lambda work: over_stdio(shop, work)


@pytest.mark.parametrize(("arguments", "argument", "said"), CASES)
def test_a_bad_argument_is_refused_in_the_tools_own_words(
    face: Any, arguments: dict, argument: str, said: str
) -> None:
    async def ask(client):
        return await client.call_tool("shop", arguments)

    result = face(ask)
    assert result.is_error
    text = result.content[0].text
    assert said in text
    assert "pydantic" not in text and "validation error" not in text
    error = result.structured_content["error"]
    assert (error["type"], error["argument"]) == ("invalid_request_error", argument)
    assert error["message"] == text


def test_the_input_schema_takes_no_other_argument(face: Any) -> None:
    async def tools(client):
        return (await client.list_tools()).tools

    (tool,) = face(tools)
    assert tool.input_schema["additionalProperties"] is False


def test_only_tools_are_advertised_and_served(face: Any) -> None:
    async def capabilities(client):
        advertised = client.server_capabilities
        try:
            await client.list_prompts()
        except Exception as error:  # the SDK raises its MCPError
            return advertised, str(error)
        return advertised, "served"

    advertised, prompts = face(capabilities)
    assert advertised.tools is not None
    assert advertised.prompts is None
    assert advertised.resources is None
    assert prompts != "served"


def test_a_refused_round_carries_the_services_json_error(face: Any) -> None:
    async def too_long(client):
        return await client.call_tool("shop", {"question": "x" * 8_001})

    result = face(too_long)
    assert result.is_error
    assert result.structured_content["error"]["type"] == "invalid_request_error"
    assert result.structured_content["error"]["message"] == result.content[0].text


def test_a_host_the_service_does_not_answer_is_refused_as_json_on_mcp(served: Any) -> None:
    response = httpx2.post(
        f"{served.url}/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
        headers={"Host": "evil.example", "Authorization": f"Bearer {TOKEN}"},
        timeout=10,
    )
    assert response.status_code == 400
    assert response.headers["content-type"].startswith("application/json")
    error = response.json()["error"]
    assert error["type"] == "invalid_request_error"
    assert "--allowed-host" in error["message"]
