"""A degraded round on the command line, against a real OpenAI-compatible HTTP server on
127.0.0.1 that fails the requests a test chooses (tests/llm/fake_servers.py): the failed tool or
coordinator is a warning on stderr naming task, tool and cause, the round says it is degraded,
`--json` carries `degraded` and `stats.failed`, and `--strict` exits 1."""

from __future__ import annotations

from pathlib import Path

from tests.llm.fake_servers import FakeLLMServer, error, reply

from .conftest import result_json

QUOTE_ONLY = """
version: 1
domain: shop
description: Quotes prices.
llm:
  provider: openai_like
  model: test-model
  api_base: {url}/v1
  max_retries: 0          # one failed request is a failed call
  timeout_s: 5
tools:
  - name: quote
    kind: prompt
    description: Writes a quote.
    activation: always
    prompt: "Quote for: {{{{ text }}}}"
{extra}
"""

COMPARE = """
  - name: compare
    kind: prompt
    description: Compares two products from their subtasks' results.
    instruction: Does the user compare two products?
    activation: always
    consumes_context: true
    prompt: "Compare using: {% for p in context %}{{ p.text }}; {% endfor %}"
    decompose:
      extract:
        schema: {type: object, properties: {products: {type: array, items: {type: string}}}}
      relevant_if: "params.products | length >= 2"
      subtasks:
        - name: quote
          for_each: params.products
          prompt: "Price of {{ item }}"
          required_tools: [quote]
      activate_after_subtasks: true
"""


def pipeline(tmp_path: Path, server: FakeLLMServer, extra: str = "") -> Path:
    path = tmp_path / "shop.yaml"
    path.write_text(QUOTE_ONLY.format(url=server.url, extra=extra), encoding="utf-8")
    return path


def test_a_tool_failed_by_the_server_is_a_warning_on_stderr_and_the_round_is_degraded(
    cli, tmp_path, llm_server: FakeLLMServer
):
    llm_server.script(error(500, "the model is overloaded"), reply("The answer."))
    result = cli("run", pipeline(tmp_path, llm_server), "price of X?")
    assert result.exit_code == 0, result.output
    assert "The answer." in result.stdout
    assert "warning: task 1: tool 'quote' failed (" in result.stderr
    assert "500" in result.stderr and "the round went on without its result" in result.stderr
    assert "warning: degraded round: 1 tool failed" in result.stderr
    assert "--strict makes this exit 1" in result.stderr


def test_strict_makes_a_degraded_round_exit_1(cli, tmp_path, llm_server: FakeLLMServer):
    llm_server.script(error(500), reply("The answer."))
    result = cli("run", pipeline(tmp_path, llm_server), "price of X?", "--strict")
    assert result.exit_code == 1, result.output
    assert "The answer." in result.stdout  # the answer is still shown
    assert "so it exits 1 (--strict)" in result.stderr


def test_strict_leaves_a_clean_round_at_exit_0(cli, tmp_path, llm_server: FakeLLMServer):
    llm_server.script(reply("A quote."), reply("The answer."))
    result = cli("run", pipeline(tmp_path, llm_server), "price of X?", "--strict")
    assert result.exit_code == 0, result.output
    assert "degraded" not in result.stderr


def test_json_carries_degraded_and_the_failures_counted(cli, tmp_path, llm_server: FakeLLMServer):
    llm_server.script(error(503), reply("The answer."))
    result = cli("run", pipeline(tmp_path, llm_server), "price of X?", "--json")
    data = result_json(result)
    assert data["degraded"] is True
    assert data["stats"]["failed"] == {"tools": 1, "coordinators": 0, "tasks": 0, "replies": 0}
    [warning] = data["warnings"]
    assert warning.startswith("task 1: tool 'quote' failed (")


def test_a_coordinator_whose_decomposition_failed_writes_no_answer_as_if_its_subtasks_ran(
    cli, tmp_path, llm_server: FakeLLMServer
):
    # 1: compare's extraction (fails); 2: quote on the root; 3: the final answer
    llm_server.script(error(500), reply("A quote."), reply("The answer."))
    path = pipeline(tmp_path, llm_server, extra=COMPARE)
    result = cli("run", path, "compare the KD-450 and the KW-620", "--json", "--strict")
    assert result.exit_code == 1
    data = result_json(result)
    tools = {tool["name"]: tool for tool in data["tasks"]["tools"]}
    assert (tools["compare"]["status"], tools["compare"]["reason"]) == (
        "failed",
        "decompose_failed",
    )
    assert tools["quote"]["status"] == "done"
    assert data["tasks"]["children"] == []  # no subtasks were made
    assert len(llm_server.requests) == 3  # compare's own prompt was never sent
    [warning] = data["warnings"]
    assert warning.startswith("task 1: coordinator 'compare' failed to decompose it (")
    assert data["stats"]["failed"]["coordinators"] == 1


def test_chat_says_on_stderr_that_a_round_is_degraded(cli, tmp_path, llm_server: FakeLLMServer):
    llm_server.script(error(500), reply("The answer."))
    result = cli("chat", pipeline(tmp_path, llm_server), input="price of X?\n")
    assert result.exit_code == 0, result.output
    assert "warning: task 1: tool 'quote' failed (" in result.stderr
    assert "warning: degraded round: 1 tool failed" in result.stderr
    assert "--strict" not in result.stderr  # chat has no such option


def test_the_task_tree_shows_a_coordinator_not_activated_after_its_failed_decomposition(
    cli, tmp_path, llm_server: FakeLLMServer
):
    llm_server.script(error(500), reply("A quote."), reply("The answer."))
    path = pipeline(tmp_path, llm_server, extra=COMPARE)
    result = cli("run", path, "compare the KD-450 and the KW-620")
    assert "compare — not activated (its decomposition failed), failed  (1:compare)" in (
        result.stdout
    )


ROUTER_PLUGIN = '''
from runner.engine.results import ToolResult
from runner.engine.task import Task


class Router:
    """Sends each part of the question to a tool by name, one of them misspelt."""

    def __init__(self, config, settings):
        self.config = config

    def execute(self, text, env):
        return ToolResult.context("")

    def decompose(self, task, env):
        task.sub_tasks += [
            Task("", "price of X", required_tool_names={"quote"}),
            Task("", "stock of X", required_tool_names={"stok", "shop.stokc"}),
        ]
        return task
'''

ROUTER = """
  - name: router
    kind: python
    class: router_plugin:Router
    path: plugins
    activation: coordinator_only
"""


def test_c13_a_python_coordinator_forcing_only_unknown_tools_fails_that_task_and_strict_exits_1(
    cli, tmp_path, llm_server: FakeLLMServer, monkeypatch
):
    """[decided] forced activation with nothing to run fails the task; the round goes on (the
    other subtask is quoted, the answer written) and is degraded."""
    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "router_plugin.py").write_text(ROUTER_PLUGIN, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path / "plugins"))
    monkeypatch.delitem(__import__("sys").modules, "router_plugin", raising=False)
    llm_server.script(reply("12 EUR."), reply("X costs 12 EUR."), reply("The answer."))
    path = pipeline(tmp_path, llm_server, ROUTER)
    result = cli("run", path, "price and stock of X?", "--allow-python", "--strict", "--json")
    assert result.exit_code == 1, result.output
    data = result_json(result)
    assert data["degraded"] is True and data["stats"]["failed"]["tasks"] == 1
    [failed] = [w for w in data["warnings"] if w.startswith("task 1.2:")]
    assert "'shop.stokc', 'stok'" in failed and "the task failed (C13–C15)" in failed
    statuses = {t["task_no"]: t["status"] for t in data["tasks"]["children"]}
    assert statuses == {"1.1": "done", "1.2": "failed"}
