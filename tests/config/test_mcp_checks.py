"""`mcp_servers` and `mcp` tools, checked offline: no server is started or reached. (Each code's
own case is a fixture in tests/fixtures/invalid; these are the other branches.)"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from runner.config import validate_file

BASE = """\
domain: weather
mcp_servers:
{servers}
tools:
  - name: forecast
    kind: mcp
    server: {server}
"""
STDIO = "  weather:\n    command: python\n    args: [server.py]\n"


def report(write: Callable[..., Path], servers: str = STDIO, server: str = "weather", **files):
    path = write(BASE.format(servers=servers.rstrip("\n"), server=server), files)
    return [(d.code, d.severity.value, d.message, d.line) for d in validate_file(path).diagnostics]


def test_a_stdio_server_and_a_tool_that_names_it_are_valid(write_pipeline) -> None:
    assert report(write_pipeline) == []


def test_an_http_server_with_headers_from_the_environment_is_valid(write_pipeline) -> None:
    servers = (
        "  weather:\n    url: https://mcp.example.com/mcp\n"
        "    headers: {Authorization: 'Bearer ${WEATHER_TOKEN}'}\n"
    )
    assert report(write_pipeline, servers) == []


def test_headers_on_a_stdio_server_are_r128(write_pipeline) -> None:
    servers = STDIO + "    headers: {X-Key: abc}\n"
    [(code, _, message, _)] = report(write_pipeline, servers)
    assert code == "R128"
    assert "`headers` are sent to an endpoint" in message


def test_a_command_given_as_a_path_of_the_folder_must_exist(write_pipeline) -> None:
    servers = "  weather:\n    command: ./bin/weather-server\n"
    [(code, *_)] = report(write_pipeline, servers)
    assert code == "R107"
    assert report(write_pipeline, servers, **{"bin/weather-server": "#!/bin/sh\n"}) == []


def test_a_server_block_needs_a_command_or_a_url(write_pipeline) -> None:
    [(code, _, message, _)] = report(write_pipeline, "  weather:\n    args: [x]\n")
    assert code == "S109"
    assert "`command` or `url`" in message
