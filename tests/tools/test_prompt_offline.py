"""Issue 29, point 3: a prompt tool without a model never presents its prompt as the answer. It
answers with the author's `offline` reply (rendered with the prompt's variables), or its result
says it needs a model and the round is degraded — through `runner run`, the MCP and OpenAI API faces
alike (the C25 terminal answer of a greeting, the C23 guaranteed answer of a lookup)."""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from starlette.testclient import TestClient

from runner.cli import main
from runner.cli.webapp import compose
from runner.config import load_pipeline
from runner.documents.diagnostics import PipelineError
from runner.service.pipelines import Service

SUPPORT = Path(__file__).parents[2] / "pipelines" / "support"
GREETING_PROMPT = "Reply in one or two friendly sentences"  # the greeting tool's instructions

ONE_TOOL = """\
version: 1
domain: desk
description: Answers customers.
llm:
{llm}
tools:
  - name: greeter
    kind: prompt
    description: Greets the customer.
    activation: always
    output: answer
    prompt: |
      You are a support assistant. Write a warm welcome for: {{{{ task }}}}
{extra}
"""


@pytest.fixture(scope="module")
def support(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The support example pipeline in a folder of its own (its index is written there)."""
    folder = tmp_path_factory.mktemp("offline") / "support"
    shutil.copytree(SUPPORT, folder, ignore=shutil.ignore_patterns(".runner"))
    return folder / "support.yaml"


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch) -> Callable[..., Result]:
    monkeypatch.delenv("RUNNER_LLM", raising=False)
    runner = CliRunner()
    return lambda *args: runner.invoke(main, [str(arg) for arg in args])


def run_json(cli: Callable[..., Result], pipeline: Path, message: str) -> dict[str, Any]:
    result = cli("run", pipeline, message, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def desk(tmp_path: Path, extra: str = "", llm: str = "  provider: offline") -> Path:
    path = tmp_path / "desk.yaml"
    path.write_text(ONE_TOOL.format(llm=llm, extra=extra), encoding="utf-8")
    return path


# --- the support example: greetings answered as greetings -----------------------------------


@pytest.mark.parametrize("message", ["hi", "Hello!", "good morning"])
def test_a_greeting_gets_the_greeting_reply_offline_not_the_prompt(cli, support, message) -> None:
    data = run_json(cli, support, message)
    assert data["answer"].startswith("Hello, and thanks for contacting Kestrel support!")
    assert GREETING_PROMPT not in data["answer"]
    assert data["degraded"] is False


@pytest.mark.parametrize("message", ["thanks", "Thank you so much", "cheers"])
def test_a_thank_you_gets_a_youre_welcome_offline(cli, support, message) -> None:
    data = run_json(cli, support, message)
    assert data["answer"].startswith("You're welcome!")
    assert "The customer wrote a greeting" not in data["answer"]
    assert data["degraded"] is False


def test_the_safety_reply_offline_is_the_instructions_not_the_prompt(cli, support) -> None:
    data = run_json(cli, support, "There is smoke coming out of my dryer")
    assert "Switch the appliance off and unplug it" in data["answer"]
    assert "Do not troubleshoot" not in data["answer"]  # an instruction to the model


def test_the_openai_api_face_answers_hi_and_thanks_as_greetings(support) -> None:
    service = Service.open([support.parent])
    try:
        app = compose(service, tokens=(), playground=False, close_service=False)
        http = TestClient(app, base_url="http://127.0.0.1")
        replies = {}
        for message in ("hi", "thanks"):
            body = {"model": "support", "messages": [{"role": "user", "content": message}]}
            response = http.post("/v1/chat/completions", json=body)
            assert response.status_code == 200, response.text
            replies[message] = response.json()["choices"][0]["message"]["content"]
    finally:
        service.close()
    assert replies["hi"].startswith("Hello, and thanks for contacting Kestrel support!")
    assert replies["thanks"].startswith("You're welcome!")
    assert all(GREETING_PROMPT not in reply for reply in replies.values())


def test_the_mcp_face_answers_hi_and_thanks_as_greetings(support) -> None:
    from mcp import Client

    from runner.serve.mcp_tools import pipelines_server

    service = Service.open([support.parent])

    async def ask_both() -> dict[str, str]:
        async with Client(pipelines_server(service)) as client:
            replies = {}
            for message in ("hi", "thanks"):
                result = await client.call_tool("support", {"question": message})
                assert not result.is_error
                replies[message] = result.content[0].text
            return replies

    try:
        replies = asyncio.run(ask_both())
    finally:
        service.close()
    assert replies["hi"].startswith("Hello, and thanks for contacting Kestrel support!")
    assert replies["thanks"].startswith("You're welcome!")
    assert all(GREETING_PROMPT not in reply for reply in replies.values())


# --- a tool without an `offline` reply ------------------------------------------------------


def test_without_an_offline_reply_the_answer_says_a_model_is_needed(cli, tmp_path) -> None:
    data = run_json(cli, desk(tmp_path), "Hello there")
    assert data["answer"] == (
        "This needs a language model, and none is configured: the greeter tool cannot write "
        "its reply without one."
    )
    assert "support assistant" not in data["answer"]  # never the prompt


def test_without_an_offline_reply_the_round_is_degraded_and_the_warning_says_the_fix(
    cli, tmp_path
) -> None:
    data = run_json(cli, desk(tmp_path), "Hello there")
    assert data["degraded"] is True
    assert data["stats"]["failed"]["tools"] == 1
    (warning,) = [w for w in data["warnings"] if "greeter" in w]
    assert "tool 'greeter' needs a language model" in warning
    assert "give it `offline:`" in warning
    assert "support assistant" not in warning


def test_strict_exits_1_on_a_tool_that_needs_a_model(cli, tmp_path) -> None:
    result = cli("run", desk(tmp_path), "Hello there", "--strict")
    assert result.exit_code == 1
    assert "needs a language model" in result.stderr


# --- a tool with an `offline` reply ---------------------------------------------------------


def test_the_offline_reply_is_rendered_with_the_prompts_variables(cli, tmp_path) -> None:
    extra = '    offline: "Welcome, {{ task | upper }}! ({{ tool }} of {{ domain }})"'
    data = run_json(cli, desk(tmp_path, extra), "dear Ann")
    assert data["answer"] == "Welcome, DEAR ANN! (greeter of desk)"
    assert data["degraded"] is False


def test_an_offline_reply_that_renders_empty_counts_as_none(cli, tmp_path) -> None:
    extra = "    offline: \"{% if 'thank' in task %}You're welcome!{% endif %}\""
    data = run_json(cli, desk(tmp_path, extra), "Hello there")
    assert data["answer"].startswith("This needs a language model")
    assert data["degraded"] is True


def test_the_offline_template_file_looks_up_rows_and_cites_them(cli, tmp_path) -> None:
    (tmp_path / "plans.csv").write_text("plan,price\nBasic,5\nPro,12\n", encoding="utf-8")
    (tmp_path / "reply.j2").write_text(
        '{% for row in lookup("plans", "Pro") %}The {{ row.plan }} plan costs '
        "{{ row.price }} euros.{% endfor %}",
        encoding="utf-8",
    )
    extra = """    offline_template: reply.j2
  - name: plans
    kind: lookup
    description: Plans.
    activation: coordinator_only
    table: plans.csv
    key: plan"""
    data = run_json(cli, desk(tmp_path, extra), "How much is Pro?")
    assert data["answer"].startswith("The Pro plan costs 12 euros.")
    assert [source["document"] for source in data["sources"]] == ["plans.csv"]


def test_a_model_answers_the_tool_and_the_offline_reply_is_not_used(cli, tmp_path) -> None:
    llm = """  provider: scripted
  fallback: offline
  script:
    - {purpose: tool, tool: greeter, reply: Good to see you!}"""
    data = run_json(cli, desk(tmp_path, '    offline: "Offline hello."', llm), "hi")
    assert data["answer"] == "Good to see you!"


def test_a_script_that_leaves_the_tool_to_the_offline_fallback_gets_the_offline_reply(
    cli, tmp_path
) -> None:
    llm = """  provider: scripted
  fallback: offline
  script:
    - {purpose: answer, reply: never asked}"""
    data = run_json(cli, desk(tmp_path, '    offline: "Offline hello."', llm), "hi")
    assert data["answer"] == "Offline hello."


# --- validation ---------------------------------------------------------------------------


def line_of(path: Path, key: str) -> int:
    lines = path.read_text(encoding="utf-8").splitlines()
    return next(number for number, line in enumerate(lines, 1) if line.strip().startswith(key))


def test_offline_and_offline_template_together_is_a_located_error(tmp_path) -> None:
    (tmp_path / "reply.j2").write_text("Hi", encoding="utf-8")
    path = desk(tmp_path, '    offline: "Hi"\n    offline_template: reply.j2')
    with pytest.raises(PipelineError) as raised:
        load_pipeline(path)
    (diagnostic,) = raised.value.diagnostics
    assert diagnostic.code == "S110"
    assert "gives both `offline` and `offline_template`" in diagnostic.message
    assert diagnostic.line == line_of(path, "offline_template:")  # the second of the two keys
    assert "`offline` holds the reply's text itself" in diagnostic.hint


def test_an_offline_reply_using_a_variable_it_never_receives_is_a_located_error(tmp_path) -> None:
    path = desk(tmp_path, '    offline: "Hello {{ customer }}"')
    with pytest.raises(PipelineError) as raised:
        load_pipeline(path)
    (diagnostic,) = raised.value.diagnostics
    assert diagnostic.code == "R110"
    assert "`customer`" in diagnostic.message
    assert diagnostic.line == line_of(path, "offline:")


@pytest.fixture(autouse=True)
def _no_shell_provider(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("RUNNER_LLM", raising=False)
    yield
