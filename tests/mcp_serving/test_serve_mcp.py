"""`runner serve --mcp`: each pipeline a tool at /mcp, for the official MCP client; the
service's bearer tokens guard it."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from .conftest import ASK, COMPARE, QUESTION, TOKEN


async def with_client(url: str, token: str | None, work: Any) -> Any:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        return await work(client)


def call(served, work, token: str | None = TOKEN) -> Any:
    return asyncio.run(with_client(f"{served.url}/mcp", token, work))


def test_each_pipeline_is_a_tool_taking_a_question_and_a_session_id(served):
    async def tools(client):
        return (await client.list_tools()).tools

    (tool,) = call(served, tools)
    assert tool.name == "shop"
    assert tool.description.startswith("Compares Kestrel appliances and quotes their prices.")
    assert set(tool.input_schema["properties"]) == {"question", "session_id"}
    assert tool.input_schema["required"] == ["question"]


def test_a_question_is_answered_with_its_sources_as_structured_content(served):
    async def ask(client):
        return await client.call_tool("shop", {"question": COMPARE})

    result = call(served, ask)
    assert not result.is_error
    assert result.content[0].text == "The KD-450 costs 100 EUR more than the KW-620."
    data = result.structured_content
    assert data["outcome"] == "answer"
    assert data["answer"] == "The KD-450 costs 100 EUR more than the KW-620."
    assert {"document": "products.csv", "heading": "KD-450"} in data["sources"]


def test_c24_a_clarifying_question_comes_back_marked_with_the_session_to_answer_it(served):
    async def converse(client):
        asked = await client.call_tool("shop", {"question": ASK})
        session = asked.structured_content["session_id"]
        answered = await client.call_tool("shop", {"question": "the kw-620", "session_id": session})
        return asked, answered

    asked, answered = call(served, converse)
    assert asked.structured_content["outcome"] == "clarification"
    assert asked.structured_content["question"] == QUESTION
    session = asked.structured_content["session_id"]
    assert asked.content[0].text.startswith(f"Clarifying question: {QUESTION}")
    assert repr(session) in asked.content[0].text
    assert answered.structured_content["outcome"] == "answer"
    assert answered.structured_content["session_id"] == session
    assert answered.structured_content["round"] == 2
    assert answered.content[0].text == "The KW-620 costs 449 EUR."


def test_a_refused_round_is_an_error_result_with_the_services_message(served):
    async def too_long(client):
        return await client.call_tool("shop", {"question": "x" * 8_001})

    result = call(served, too_long)
    assert result.is_error
    assert result.content[0].text.startswith("the message has 8,001 characters, more than")


def test_without_the_bearer_token_the_mcp_endpoint_is_refused(served):
    plain = httpx2.post(f"{served.url}/mcp", json={}, timeout=10)
    assert plain.status_code == 401
    assert plain.json()["error"]["type"] == "authentication_error"

    async def tools(client):
        return await client.list_tools()

    with pytest.raises(Exception):  # noqa: B017  (the SDK's own error for a refused connection)
        call(served, tools, token=None)


def test_a_request_over_the_services_body_limit_is_refused(served):
    headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
    body = b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "pad": "' + b"x" * (1 << 20) + b'"}'
    response = httpx2.post(f"{served.url}/mcp", content=body, headers=headers, timeout=30)
    assert response.status_code == 413
