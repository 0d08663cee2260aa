"""How a server block of `mcp_servers` becomes what the SDK starts or connects to: the stdio
command (run in the pipeline's folder; `python` is the Python running runner) and the values
of `env` and `headers`, whose `${NAME}` are read from runner's environment when the server
starts, so that no secret is written in the pipeline file."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING

from runner.config.model import ENV_REFERENCE
from runner.text.credentials import remember_secrets

if TYPE_CHECKING:
    from runner.config.model import McpServer


class McpError(RuntimeError):
    """An MCP server could not be started, reached or used; the message names the server and
    says what to do."""


def describe(server: McpServer) -> str:
    """`server 'weather' (python servers/weather.py)`, for messages."""
    if server.url is not None:
        return f"MCP server {server.name!r} ({server.url})"
    shown = " ".join([server.command or "", *server.args])
    return f"MCP server {server.name!r} ({shown})"


def expand(value: str, where: str, environ: Mapping[str, str] | None = None) -> str:
    """`value` with each `${NAME}` replaced by the environment variable NAME. Raises McpError
    naming the variable and `where` it is used when it is not set."""
    environ = os.environ if environ is None else environ

    def variable(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in environ:
            raise McpError(f"{where} reads the environment variable {name}, which is not set")
        remember_secrets([environ[name]])  # hidden in whatever leaves runner
        return environ[name]

    return ENV_REFERENCE.sub(variable, value)


def expanded(values: Mapping[str, str], where: str) -> dict[str, str]:
    return {key: expand(str(value), f"{where}.{key}") for key, value in values.items()}


def command_of(server: McpServer) -> str:
    """The program to start: `python` is the interpreter running runner, so that a server
    written in Python finds the packages runner was installed with."""
    command = server.command or ""
    return sys.executable if command == "python" else command
