"""`runner mcp list PIPELINE` and `runner validate --online`: the servers started, their tools
listed, and the `mcp` tools checked against them."""

from __future__ import annotations

import json

from click.testing import CliRunner

from runner.cli import main

CHECKED = """\
- name: forecast
  kind: mcp
  server: weather
  arguments: {days: three}
  clarify: {question: "Which city?", required: [town]}
- name: outlook
  kind: mcp
  server: weather
  tool: forcast
"""


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def test_mcp_list_shows_each_servers_tools_their_arguments_and_who_uses_them(write_pipeline):
    path = write_pipeline("- {name: forecast, kind: mcp, server: weather}\n")
    result = run("mcp", "list", str(path))
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "weather:"
    assert "  forecast  (tool 'forecast')" in lines
    assert "      - city: string (required)" in lines
    assert "      - days: integer" in lines
    assert "  alerts" in lines


def test_mcp_list_json_gives_the_input_schemas(write_pipeline):
    path = write_pipeline("- {name: forecast, kind: mcp, server: weather}\n")
    report = json.loads(run("mcp", "list", str(path), "--format", "json").output)
    (server,) = report["servers"]
    tools = {tool["name"]: tool for tool in server["tools"]}
    assert tools["forecast"]["input_schema"]["required"] == ["city"]
    assert tools["forecast"]["used_by"] == "forecast"
    assert report["passed"] is True


def test_online_checks_name_an_unknown_tool_a_fixed_argument_and_a_clarify_parameter(
    write_pipeline,
):
    path = write_pipeline(CHECKED)
    result = run("mcp", "list", str(path), "--format", "json")
    assert result.exit_code == 1
    found = {(d["code"], d["line"]): d["message"] for d in json.loads(result.output)["diagnostics"]}
    base = path.read_text().splitlines().index("tools:") + 2  # the first tool's line
    assert found == {
        ("M104", base + 3): "`forecast` does not take 'three' as `days`: "
        "'three' is not of type 'integer'",
        ("M105", base + 4): "clarify.required names `town`, which `forecast` does not take",
        ("M102", base + 8): "the MCP server `weather` has no tool `forcast`; "
        "did you mean `forecast`?",
    }


def test_validate_online_adds_the_online_checks_to_the_offline_ones(write_pipeline):
    path = write_pipeline(CHECKED)
    offline = run("validate", str(path), "--format", "json")
    online = run("validate", "--online", str(path), "--format", "json")
    assert offline.exit_code == 0
    assert online.exit_code == 1
    codes = [d["code"] for d in json.loads(online.output)["files"][0]["diagnostics"]]
    assert sorted(codes) == ["M102", "M104", "M105"]


def test_a_server_that_cannot_start_is_m101_at_its_block(write_pipeline):
    servers = "  broken:\n    command: runner-test-no-such-program\n"
    path = write_pipeline("- {name: gone, kind: mcp, server: broken}\n", servers)
    result = run("mcp", "list", str(path))
    assert result.exit_code == 1
    assert "broken:\n  (no tools: MCP server 'broken' (runner-test-no-such-program) could not" in (
        result.output
    )
    assert "[M101]" in result.output


def test_a_server_tool_with_a_broken_input_schema_is_m103(write_pipeline):
    path = write_pipeline("- {name: almanac, kind: mcp, server: weather}\n")
    result = run("mcp", "list", str(path), "--format", "json")
    assert result.exit_code == 1
    [diagnostic] = json.loads(result.output)["diagnostics"]
    assert diagnostic["code"] == "M103"
    assert diagnostic["message"].startswith(
        "the input schema of `almanac` on `weather` is not a valid JSON Schema"
    )
