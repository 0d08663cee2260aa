"""The MCP tests: a weather server written with the official SDK (tests/fixtures/mcp), run
over stdio by the pipelines under test or over streamable HTTP on a free port of 127.0.0.1,
and pipelines that call its tools, written to a temporary folder."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from serve.server import free_port

from runner.app import Runtime
from runner.engine.outcome import RoundResult
from runner.engine.state import SessionState

WEATHER_SERVER = Path(__file__).parent.parent / "fixtures" / "mcp" / "weather_server.py"
HTTP_TOKEN = "test-token-1"
START_TIMEOUT_S = 60.0

STDIO_SERVER = f"""\
    command: python
    args: [{WEATHER_SERVER}]
    timeout_s: 20
    start_timeout_s: 60
"""


def pipeline_text(tools: str, servers: str = "", script: str = "") -> str:
    """A pipeline of the domain `weather` with these `tools` and `mcp_servers` (YAML blocks,
    indented as their items), the `weather` server by default, and a scripted LLM."""
    servers = servers or f"  weather:\n{STDIO_SERVER}"
    return (
        "version: 1\ndomain: weather\nllm:\n  provider: scripted\n  script:\n"
        + textwrap.indent(textwrap.dedent(script), "    ")
        + '    - {purpose: answer, reply: "Here is the weather."}\n'
        + f"mcp_servers:\n{servers}"
        + f"tools:\n{textwrap.indent(textwrap.dedent(tools), '  ')}"
    )


@pytest.fixture(scope="session")
def pipelines_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One folder for every test's pipeline: a stdio server runs in its pipeline's folder, and
    the tests share the servers they name alike (one start per process, as in production)."""
    return tmp_path_factory.mktemp("pipelines")


@pytest.fixture
def write_pipeline(pipelines_folder: Path, request: pytest.FixtureRequest):
    def write(tools: str, servers: str = "", script: str = "") -> Path:
        path = pipelines_folder / f"{request.node.name}.yaml"
        path.write_text(pipeline_text(tools, servers, script), encoding="utf-8")
        return path

    return write


def run_round(runtime: Runtime, state: SessionState, message: str) -> RoundResult:
    """One round on its own event loop, as `runner run` runs it."""
    return asyncio.run(runtime.orchestrator().run_round(state, message))


@pytest.fixture(scope="session")
def http_server() -> Iterator[str]:
    """The weather server over streamable HTTP; its URL. It wants HTTP_TOKEN as a bearer."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(WEATHER_SERVER), "--http", str(port), HTTP_TOKEN],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + START_TIMEOUT_S
    try:
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError(f"the weather server exited {process.returncode}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(10)
