"""Issue 29, point 4, through a real MCP server: on the offline provider a `kind: mcp` tool's
arguments are read from the message by its input schema — two numbers each where the words put
them, a time zone whole — and one the message does not give is left out, so the tool's
`clarify` question is asked (C24)."""

from __future__ import annotations

from pathlib import Path

from runner.app import Runtime
from runner.engine.state import SessionState

from .conftest import STDIO_SERVER, run_round

PIPELINE = f"""\
version: 1
domain: tools
llm:
  provider: offline
mcp_servers:
  weather:
{STDIO_SERVER}tools:
  - name: add
    kind: mcp
    server: weather
    activation: always
    clarify: {{question: "Which two numbers should I add?"}}
  - name: local_time
    kind: mcp
    server: weather
    activation: always
    clarify: {{question: "Which time zone, as Area/City (e.g. Europe/Paris)?"}}
"""


def round_of(folder: Path, name: str, tool: str, *messages: str):
    """The rounds of `messages` in one session, with only `tool` active, and the buffer."""
    path = folder / f"{name}.yaml"
    other = {"add": "local_time", "local_time": "add"}[tool]
    block = f"  - name: {other}\n    kind: mcp\n    server: weather\n    activation: always\n"
    path.write_text(PIPELINE.replace(block, block.replace("always", "coordinator_only")), "utf-8")
    with Runtime.open(path) as runtime:
        state = SessionState.new("s", runtime.pipeline)
        results = [run_round(runtime, state, message) for message in messages]
        return results, state.buffer.snapshot()


def test_the_sum_of_3_and_4_calls_the_tool_with_3_and_4(pipelines_folder, request) -> None:
    _, buffer = round_of(pipelines_folder, request.node.name, "add", "What is the sum of 3 and 4?")
    (entry,) = buffer["1:add"]
    assert entry.data["arguments"] == {"a": 3, "b": 4}
    assert entry.context == "3 + 4 = 7"


def test_add_12_plus_30_calls_the_tool_with_12_and_30(pipelines_folder, request) -> None:
    _, buffer = round_of(pipelines_folder, request.node.name, "add", "Add 12 plus 30")
    (entry,) = buffer["1:add"]
    assert entry.data["arguments"] == {"a": 12, "b": 30}


def test_an_unquoted_time_zone_is_sent_whole(pipelines_folder, request) -> None:
    _, buffer = round_of(
        pipelines_folder, request.node.name, "local_time", "What time is it in Europe/Paris?"
    )
    (entry,) = buffer["1:local_time"]
    assert entry.data["arguments"] == {"timezone": "Europe/Paris"}
    assert entry.context == "12:00 in Europe/Paris"


def test_c24_a_city_is_no_time_zone_so_the_tool_asks_then_runs_with_the_answer(
    pipelines_folder, request
) -> None:
    (first, second), buffer = round_of(
        pipelines_folder,
        request.node.name,
        "local_time",
        "What time is it in Tokyo?",
        "Asia/Tokyo",
    )
    assert (first.outcome, first.question) == (
        "clarification",
        "Which time zone, as Area/City (e.g. Europe/Paris)?",
    )
    (entry,) = buffer["1:local_time"]
    assert second.outcome == "answer"
    assert entry.data["arguments"] == {"timezone": "Asia/Tokyo"}


def test_c24_numbers_that_cannot_be_told_apart_make_the_tool_ask(pipelines_folder, request):
    (result,), _ = round_of(
        pipelines_folder, request.node.name, "add", "I have 3 apples, 7 pears, 2 bags: add"
    )
    assert (result.outcome, result.question) == ("clarification", "Which two numbers should I add?")
