"""Pipelines served as MCP tools, called by the official MCP client: `runner serve --mcp` as a
real process on a free port of 127.0.0.1 (with a bearer token), and `runner mcp serve` as the
subprocess a desktop client starts. The pipeline is the command-line tests' `shop` (a scripted
LLM, a clarifying question)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from serve.server import ServeProcess

SHOP = Path(__file__).parent.parent / "cli" / "fixtures" / "shop"
COMPARE = "Compare the KD-450 and the KW-620"
ASK = "What does it cost?"
QUESTION = "Which model do you mean? (for example KW-620)"
TOKEN = "mcp-test-token"


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("served") / "shop"
    shutil.copytree(SHOP, folder)
    return folder / "shop.yaml"


@pytest.fixture(scope="module")
def served(shop: Path) -> Iterator[ServeProcess]:
    """`runner serve --mcp` with a bearer token."""
    process = ServeProcess([shop], "--mcp", env={"RUNNER_SERVE_TOKENS": TOKEN}).wait_ready()
    yield process
    process.stop()
