"""`mcp_servers` and `mcp` tools, checked offline: no server is started or reached."""

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


def test_a_tool_naming_an_undeclared_server_is_r130_with_did_you_mean(write_pipeline) -> None:
    found = report(write_pipeline, server="wether")
    [(_, severity, message, line)] = [d for d in found if d[0] == "R130"]
    assert severity == "error"
    assert message == "unknown MCP server `wether`; did you mean `weather`?"
    assert line == 9


def test_a_server_no_tool_uses_is_r131_a_warning(write_pipeline) -> None:
    servers = STDIO + "  tickets:\n    url: http://127.0.0.1:9/mcp\n"
    [(code, severity, message, line)] = report(write_pipeline, servers)
    assert (code, severity, line) == ("R131", "warning", 6)
    assert message == "no `mcp` tool uses the MCP server `tickets`"


def test_a_server_with_both_a_command_and_a_url_is_r128(write_pipeline) -> None:
    servers = STDIO + "    url: http://127.0.0.1:9/mcp\n"
    [(code, _, message, _)] = report(write_pipeline, servers)
    assert code == "R128"
    assert message.startswith("the MCP server `weather` gives `url` and `command`")


def test_headers_on_a_stdio_server_are_r128(write_pipeline) -> None:
    servers = STDIO + "    headers: {X-Key: abc}\n"
    [(code, _, message, _)] = report(write_pipeline, servers)
    assert code == "R128"
    assert "`headers` are sent to an endpoint" in message


def test_a_reference_that_is_no_variable_name_is_r129(write_pipeline) -> None:
    servers = STDIO + "    env: {KEY: '${API KEY}'}\n"
    [(code, _, message, _)] = report(write_pipeline, servers)
    assert (code, message) == ("R129", "`${API KEY}` does not name an environment variable")


def test_a_command_given_as_a_path_of_the_folder_must_exist(write_pipeline) -> None:
    servers = "  weather:\n    command: ./bin/weather-server\n"
    [(code, *_)] = report(write_pipeline, servers)
    assert code == "R107"
    assert report(write_pipeline, servers, **{"bin/weather-server": "#!/bin/sh\n"}) == []


def test_a_server_block_needs_a_command_or_a_url(write_pipeline) -> None:
    [(code, _, message, _)] = report(write_pipeline, "  weather:\n    args: [x]\n")
    assert code == "S109"
    assert "`command` or `url`" in message
