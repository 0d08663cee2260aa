"""`runner mcp serve PIPELINE`: the pipeline as an MCP tool over stdio, started by the official
MCP client as a desktop client starts it."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.client.stdio import StdioServerParameters

from .conftest import ASK, COMPARE, QUESTION


def over_stdio(shop: Path, work: Any) -> Any:
    server = StdioServerParameters(
        command=sys.executable,
        args=["-c", "from runner.cli import main; main()", "mcp", "serve", str(shop)],
    )

    async def session() -> Any:
        async with Client(server, read_timeout_seconds=60) as client:
            return await work(client)

    return asyncio.run(session())


def test_a_desktop_client_lists_the_pipeline_and_has_its_question_answered(shop):
    async def ask(client):
        tools = (await client.list_tools()).tools
        return tools, await client.call_tool("shop", {"question": COMPARE})

    tools, result = over_stdio(shop, ask)
    assert [tool.name for tool in tools] == ["shop"]
    assert result.content[0].text == "The KD-450 costs 100 EUR more than the KW-620."
    assert result.structured_content["outcome"] == "answer"
    assert {"document": "products.csv", "heading": "KD-450"} in result.structured_content["sources"]


def test_c24_over_stdio_a_clarifying_question_is_answered_in_the_same_session(shop):
    async def converse(client):
        asked = await client.call_tool("shop", {"question": ASK})
        session = asked.structured_content["session_id"]
        return asked, await client.call_tool(
            "shop", {"question": "the kw-620", "session_id": session}
        )

    asked, answered = over_stdio(shop, converse)
    assert asked.structured_content["question"] == QUESTION
    assert answered.content[0].text == "The KW-620 costs 449 EUR."
    assert answered.structured_content["session_id"] == asked.structured_content["session_id"]
