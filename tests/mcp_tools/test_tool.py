"""`kind: mcp` tools in rounds of a YAML pipeline: arguments extracted by the server's own input
schema, the server's answer as context with its source and data, clarification, and every way a
server can fail a tool without hanging the round."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from runner.app import Runtime
from runner.engine.state import SessionState
from runner.llm.types import Purpose
from runner.mcp_client.replies import MAX_TEXT_CHARS
from runner.sources import Source

from .conftest import HTTP_TOKEN, STDIO_SERVER, WEATHER_SERVER, run_round

FORECAST = """\
- name: forecast
  kind: mcp
  server: weather
  activation: always
"""
OSLO = "- {purpose: extract, tool: forecast, reply: {city: Oslo}}\n"


def open_round(write_pipeline, tools: str, message: str, *, script: str = "", servers: str = ""):
    runtime = Runtime.open(write_pipeline(tools, servers, script))
    state = SessionState.new("s", runtime.pipeline)
    return runtime, state, run_round(runtime, state, message)


def test_the_servers_answer_is_context_sourced_to_the_server_and_its_tool(write_pipeline):
    runtime, state, result = open_round(write_pipeline, FORECAST, "weather in Oslo?", script=OSLO)
    with runtime:
        (entry,) = state.buffer.snapshot()["1:forecast"]
    assert result.outcome == "answer"
    assert entry.context == "Oslo: sunny, 21 °C, for 1 day(s)"
    assert entry.sources == (Source(document="mcp:weather", heading="forecast"),)
    assert result.sources == (Source(document="mcp:weather", heading="forecast"),)


def test_structured_content_is_kept_as_the_results_data(write_pipeline):
    runtime, state, _ = open_round(write_pipeline, FORECAST, "weather in Oslo?", script=OSLO)
    with runtime:
        (entry,) = state.buffer.snapshot()["1:forecast"]
    assert entry.data["structured_content"] == {
        "city": "Oslo",
        "days": 1,
        "sky": "sunny",
        "celsius": 21,
    }
    assert entry.data["arguments"] == {"city": "Oslo"}


# The extraction prompt outlines the schema it asks for, one `- name: type` line a parameter:
# this reply says whether the server's `days` was among them.
BY_SCHEMA = (
    "- {purpose: extract, tool: forecast, prompt: '(?m)^- days: whole number', "
    "reply: {city: Oslo, days: 2}}\n"
    "- {purpose: extract, tool: forecast, reply: {city: Oslo}}\n"
)


def test_arguments_are_extracted_with_the_servers_input_schema(write_pipeline):
    runtime, state, _ = open_round(write_pipeline, FORECAST, "Oslo, 2 days?", script=BY_SCHEMA)
    with runtime:
        (entry,) = state.buffer.snapshot()["1:forecast"]
    assert entry.data["arguments"] == {"city": "Oslo", "days": 2}
    assert entry.context == "Oslo: sunny, 21 °C, for 2 day(s)"


def test_fixed_arguments_are_sent_as_written_and_left_out_of_the_extraction(write_pipeline):
    tools = FORECAST + "  arguments: {days: 3}\n"
    runtime, state, _ = open_round(write_pipeline, tools, "Oslo, 2 days?", script=BY_SCHEMA)
    with runtime:
        (entry,) = state.buffer.snapshot()["1:forecast"]
    assert entry.data["arguments"] == {"city": "Oslo", "days": 3}
    extract = [c for c in runtime.client.calls if c.purpose == Purpose.EXTRACT.value]
    assert len(extract) == 1


def test_a_tool_named_otherwise_on_the_server_is_called_by_its_server_name(write_pipeline):
    tools = FORECAST.replace("name: forecast", "name: weather_now") + "  tool: forecast\n"
    script = "- {purpose: extract, tool: weather_now, reply: {city: Bergen}}\n"
    runtime, state, _ = open_round(write_pipeline, tools, "weather in Bergen?", script=script)
    with runtime:
        (entry,) = state.buffer.snapshot()["1:weather_now"]
    assert entry.context.startswith("Bergen: sunny")


def test_a_missing_required_argument_asks_the_clarify_question_then_runs_with_the_answer(
    write_pipeline,
):
    tools = FORECAST + '  clarify: {question: "Which city?"}\n'
    script = (
        "- {purpose: extract, tool: forecast, task: Lyon, reply: {city: Lyon}}\n"
        "- {purpose: extract, tool: forecast, reply: {}}\n"
    )
    runtime, state, first = open_round(write_pipeline, tools, "what weather?", script=script)
    with runtime:
        second = run_round(runtime, state, "Lyon")
        (entry,) = state.buffer.snapshot()["1:forecast"]
    assert (first.outcome, first.question) == ("clarification", "Which city?")
    assert second.outcome == "answer"
    assert entry.context.startswith("Lyon: sunny")


def test_a_missing_required_argument_without_clarify_fails_the_tool_saying_which(
    write_pipeline,
):
    script = "- {purpose: extract, tool: forecast, reply: {}}\n"
    runtime, _, result = open_round(write_pipeline, FORECAST, "what weather?", script=script)
    runtime.close()
    (warning,) = [w for w in result.warnings if "forecast" in w]
    assert "the task gives no city" in warning
    assert "add `clarify:`" in warning


def test_a_tool_that_answers_is_error_is_a_failed_tool_in_the_warnings(write_pipeline):
    tools = FORECAST.replace("forecast", "alerts")
    script = "- {purpose: extract, tool: alerts, reply: {region: Nordland}}\n"
    runtime, state, result = open_round(
        write_pipeline, tools, "alerts for Nordland?", script=script
    )
    runtime.close()
    (warning,) = [w for w in result.warnings if "alerts" in w]
    assert "answered with an error" in warning
    assert "no alert service for Nordland" in warning
    assert result.outcome == "answer"  # the round went on without it
    assert "1:alerts" not in state.buffer.snapshot()


def test_a_tool_the_server_does_not_have_fails_naming_the_servers_tools(write_pipeline):
    tools = FORECAST + "  tool: forecasts\n"
    runtime, _, result = open_round(write_pipeline, tools, "weather?", script=OSLO)
    runtime.close()
    (warning,) = [w for w in result.warnings if "forecast" in w]
    assert "has no tool 'forecasts'" in warning
    assert "add, alerts, almanac, crash, flood, forecast, local_time, process, slow" in warning


QUICK_SERVER = f"""\
  quick:
    command: python
    args: [{WEATHER_SERVER}]
    timeout_s: 1
    start_timeout_s: 60
"""


def test_a_call_longer_than_timeout_s_fails_the_tool(write_pipeline):
    tools = "- {name: slow, kind: mcp, server: quick, activation: always}\n"
    script = "- {purpose: extract, tool: slow, reply: {seconds: 5}}\n"
    runtime, _, result = open_round(
        write_pipeline, tools, "wait", script=script, servers=QUICK_SERVER
    )
    runtime.close()
    (warning,) = [w for w in result.warnings if "slow" in w]
    assert "took more than 1 s (the server's `timeout_s`)" in warning


def test_a_server_that_exits_mid_call_fails_the_tool_and_starts_again_next_round(
    write_pipeline,
):
    tools = (
        "- {name: crash, kind: mcp, server: quick, activation: {keywords: [crash]}}\n"
        "- {name: process, kind: mcp, server: quick, activation: always}\n"
    )
    runtime, state, crashed = open_round(write_pipeline, tools, "crash now", servers=QUICK_SERVER)
    with runtime:
        again = run_round(runtime, state, "and now?")
        (entry,) = state.buffer.snapshot()["1:process"]
    (warning,) = [w for w in crashed.warnings if "crash" in w]
    assert "closed the connection during the call of its tool 'crash'" in warning
    assert again.outcome == "answer"
    assert entry.context.startswith("pid=")


def test_a_server_that_cannot_start_in_start_timeout_s_fails_the_tool(write_pipeline):
    servers = (
        "  sleepy:\n    command: python\n"
        '    args: ["-c", "import time; time.sleep(60)"]\n    start_timeout_s: 0.5\n'
    )
    tools = "- {name: nap, kind: mcp, server: sleepy, activation: always}\n"
    runtime, _, result = open_round(write_pipeline, tools, "nap", servers=servers)
    runtime.close()
    (warning,) = [w for w in result.warnings if "nap" in w]
    assert "did not start within 0.5 s" in warning


def test_a_command_that_does_not_exist_fails_the_tool_naming_the_server(write_pipeline):
    servers = "  missing:\n    command: runner-test-no-such-program\n"
    tools = "- {name: gone, kind: mcp, server: missing, activation: always}\n"
    runtime, _, result = open_round(write_pipeline, tools, "hello", servers=servers)
    runtime.close()
    (warning,) = [w for w in result.warnings if "gone" in w]
    assert "MCP server 'missing' (runner-test-no-such-program) could not be started" in warning


def test_a_server_starts_once_per_process_for_every_round_and_runtime(write_pipeline):
    tools = "- {name: process, kind: mcp, server: weather, activation: always}\n"
    path = write_pipeline(tools)
    seen = []
    for _ in range(2):
        with Runtime.open(path) as runtime:
            state = SessionState.new("s", runtime.pipeline)
            run_round(runtime, state, "who are you?")
            seen.append(state.buffer.snapshot()["1:process"][0].context)
    assert seen[0] == seen[1]


def test_a_stdio_server_gets_only_the_environment_its_block_gives(write_pipeline, monkeypatch):
    monkeypatch.setenv("RUNNER_TEST_SETTING", "from runner's environment")
    monkeypatch.setenv("RUNNER_TEST_SOURCE", "given")
    servers = (
        f"  weather:\n{STDIO_SERVER}"
        f"  given:\n{STDIO_SERVER}"
        "    env: {RUNNER_TEST_SETTING: '${RUNNER_TEST_SOURCE} explicitly'}\n"
    )
    tools = (
        "- {name: process, kind: mcp, server: weather, activation: always}\n"
        "- {name: given_process, kind: mcp, server: given, tool: process, activation: always}\n"
    )
    runtime, state, _ = open_round(write_pipeline, tools, "env?", servers=servers)
    with runtime:
        buffer = state.buffer.snapshot()
    assert buffer["1:process"][0].context.endswith("setting=-")
    assert buffer["1:given_process"][0].context.endswith("setting=given explicitly")


def http_servers(url: str, authorization: str) -> str:
    return f"  weather:\n    url: {url}\n    headers: {{Authorization: '{authorization}'}}\n"


def test_a_streamable_http_server_gets_its_headers_from_the_environment(
    write_pipeline, http_server, monkeypatch
):
    monkeypatch.setenv("RUNNER_TEST_WEATHER_TOKEN", HTTP_TOKEN)
    servers = http_servers(http_server, "Bearer ${RUNNER_TEST_WEATHER_TOKEN}")
    runtime, state, _ = open_round(
        write_pipeline, FORECAST, "weather in Oslo?", script=OSLO, servers=servers
    )
    with runtime:
        (entry,) = state.buffer.snapshot()["1:forecast"]
    assert entry.context == "Oslo: sunny, 21 °C, for 1 day(s)"
    assert entry.sources == (Source(document="mcp:weather", heading="forecast"),)


def test_an_http_server_that_refuses_the_request_fails_the_tool(
    write_pipeline, http_server, monkeypatch
):
    monkeypatch.setenv("RUNNER_TEST_WRONG_TOKEN", "not-the-token")
    servers = http_servers(http_server, "Bearer ${RUNNER_TEST_WRONG_TOKEN}")
    runtime, _, result = open_round(
        write_pipeline, FORECAST, "weather in Oslo?", script=OSLO, servers=servers
    )
    runtime.close()
    (warning,) = [w for w in result.warnings if "forecast" in w]
    assert f"MCP server 'weather' ({http_server}) could not be reached" in warning


def test_a_header_reading_an_unset_variable_fails_the_tool_naming_it(
    write_pipeline, http_server, monkeypatch
):
    monkeypatch.delenv("RUNNER_TEST_UNSET", raising=False)
    servers = http_servers(http_server, "Bearer ${RUNNER_TEST_UNSET}")
    runtime, _, result = open_round(
        write_pipeline, FORECAST, "weather?", script=OSLO, servers=servers
    )
    runtime.close()
    (warning,) = [w for w in result.warnings if "forecast" in w]
    assert (
        "mcp_servers.weather.headers.Authorization reads the environment variable "
        "RUNNER_TEST_UNSET, which is not set"
    ) in warning


def test_runner_stops_its_stdio_servers_when_it_exits(write_pipeline, pipelines_folder):
    # the server is left busy in a call that timed out: closing its input alone would not end
    # it (nor runner, waiting for it) for a minute; both end well before only if runner stops
    # it on its way out
    pid_file = pipelines_folder / "server.pid"
    pid_file.unlink(missing_ok=True)
    servers = QUICK_SERVER + f"    env: {{RUNNER_TEST_PID_FILE: '{pid_file}'}}\n"
    tools = "- {name: slow, kind: mcp, server: quick, activation: always}\n"
    script = "- {purpose: extract, tool: slow, reply: {seconds: 60}}\n"
    path = write_pipeline(tools, servers, script)
    command = [sys.executable, "-c", "from runner.cli import main; main()", "run", str(path)]
    finished = subprocess.run([*command, "wait"], capture_output=True, timeout=40)
    assert b"took more than 1 s" in finished.stderr
    pid = int(pid_file.read_text())
    deadline = time.monotonic() + 20
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pid)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_c13_a_coordinators_subtasks_require_the_mcp_tool_once_per_item(write_pipeline):
    tools = """\
- name: trip
  kind: prompt
  activation: always
  prompt: "Plan: {{ task }}"
  decompose:
    extract:
      schema: {type: object, properties: {cities: {type: array, items: {type: string}}}}
    subtasks:
      - for_each: params.cities
        as: city
        prompt: "The weather in {{ city }}"
        required_tools: [forecast]
- {name: forecast, kind: mcp, server: weather, activation: coordinator_only}
"""
    script = (
        "- {purpose: decompose, tool: trip, reply: {cities: [Oslo, Bergen]}}\n"
        "- {purpose: extract, tool: forecast, task: Oslo, reply: {city: Oslo}}\n"
        "- {purpose: extract, tool: forecast, task: Bergen, reply: {city: Bergen}}\n"
        "- {purpose: tool, tool: trip, reply: Pack light.}\n"
    )
    runtime, state, result = open_round(write_pipeline, tools, "Oslo then Bergen", script=script)
    with runtime:
        buffer = state.buffer.snapshot()
    assert result.outcome == "answer"
    assert buffer["1.1:forecast"][0].context.startswith("Oslo: sunny")
    assert buffer["1.2:forecast"][0].context.startswith("Bergen: sunny")


def test_c24_past_the_clarification_limit_a_missing_argument_fails_the_tool(write_pipeline):
    tools = FORECAST + '  clarify: {question: "Which city?"}\n'
    servers = f"  weather:\n{STDIO_SERVER}limits: {{max_clarification_rounds: 1}}\n"
    script = "- {purpose: extract, tool: forecast, reply: {}}\n"
    runtime, state, first = open_round(
        write_pipeline, tools, "what weather?", script=script, servers=servers
    )
    with runtime:
        second = run_round(runtime, state, "no idea")
    assert first.outcome == "clarification"
    (warning,) = [w for w in second.warnings if "forecast" in w]
    assert "the task gives no city" in warning
    assert "the user was asked as often as the pipeline allows" in warning


def test_a_flood_of_text_from_a_server_is_cut_saying_so(write_pipeline):
    tools = "- {name: flood, kind: mcp, server: weather, activation: always}\n"
    script = "- {purpose: extract, tool: flood, reply: {chars: 250000}}\n"
    runtime, state, _ = open_round(write_pipeline, tools, "flood", script=script)
    with runtime:
        (entry,) = state.buffer.snapshot()["1:flood"]
    assert entry.context.endswith("\n[cut: the tool answered 250,000 characters]")
    assert entry.context.count("x") == MAX_TEXT_CHARS


def test_c16_a_conditional_subtask_reads_the_structured_content_of_an_earlier_one(
    write_pipeline,
):
    tools = """\
- name: trip
  kind: prompt
  activation: always
  prompt: "Plan: {{ task }}"
  decompose:
    relevant_if: "true"
    subtasks:
      - prompt: "The weather in Oslo"
        required_tools: [forecast]
      - prompt: "Where to buy an umbrella in Oslo"
        required_tools: [advice]
        conditional:
          run_if: "completed_so_far['1.1:forecast'][0].data.structured_content.sky != 'sunny'"
- {name: forecast, kind: mcp, server: weather, activation: coordinator_only}
- {name: advice, kind: prompt, activation: coordinator_only, prompt: "Advise: {{ task }}"}
"""
    script = OSLO + "- {purpose: tool, reply: Pack light.}\n"
    runtime, state, result = open_round(write_pipeline, tools, "A day in Oslo", script=script)
    runtime.close()
    assert result.outcome == "answer"
    assert [(t.task_no, t.status.value) for t in state.root.sub_tasks] == [
        ("1.1", "done"),
        ("1.2", "skipped"),  # the server said sunny
    ]
