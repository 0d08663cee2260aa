"""A round an unexpected exception ended, from the command line (issue 29): one line names
where it happened, `--debug` prints the traceback on stderr, `--trace` keeps it in the
`round.end` event; an error runner expects says nothing of a traceback."""

from __future__ import annotations

from typing import Any

import pytest

from .conftest import trace_events

PRICE = "What does the KW-620 cost?"  # answered by the final answer (C33)
ERROR = "error: answer (LLM purpose) failed: TypeError: unhashable type: 'dict'"


def crash_in_cited_answer(*_args: Any, **_kwargs: Any) -> Any:
    raise TypeError("unhashable type: 'dict'")


@pytest.fixture
def crashing(monkeypatch: pytest.MonkeyPatch) -> None:
    """The final answer's citations crash, as they did on passages with evidence."""
    monkeypatch.setattr("runner.llm.prompts.cited_answer", crash_in_cited_answer)


def test_the_error_is_one_line_naming_the_llm_purpose_and_says_where_the_traceback_is(
    cli, shop, crashing
):
    result = cli("run", shop, PRICE)
    assert result.exit_code == 1
    assert ERROR in result.stdout
    assert "Traceback" not in result.output
    assert "--debug prints it" in result.stderr


def test_debug_prints_the_traceback_on_stderr(cli, shop, crashing):
    result = cli("run", shop, PRICE, "--debug", "--json")
    assert result.exit_code == 1
    assert result.stderr.startswith(
        "traceback of the round's error: answer (LLM purpose) failed: TypeError"
    )
    assert "Traceback (most recent call last):" in result.stderr
    assert "in crash_in_cited_answer" in result.stderr
    assert "Traceback" not in result.stdout  # the JSON stays as it is


def test_the_trace_records_the_traceback_in_the_round_end_event(cli, shop, crashing, tmp_path):
    trace = tmp_path / "trace.jsonl"
    cli("run", shop, PRICE, "--trace", trace)
    end = trace_events(trace)[-1]
    assert end["event"] == "round.end" and end["error"] == ERROR.removeprefix("error: ")
    assert "in crash_in_cited_answer" in end["traceback"]


def test_debug_prints_a_failed_tool_s_traceback_too(cli, shop, monkeypatch):
    def broken(*_args: Any, **_kwargs: Any) -> Any:
        raise RuntimeError("the table went away")

    monkeypatch.setattr("runner.tools.lookup.LookupTool.execute", broken)
    result = cli("run", shop, PRICE, "--debug")
    assert result.exit_code == 0  # the round went on without it (degraded)
    assert "traceback of tool 'price' on task 1\nTraceback" in result.stderr
    assert "RuntimeError: the table went away" in result.stderr


def test_an_error_runner_expects_says_nothing_of_a_traceback(cli, shop, tmp_path):
    script = tmp_path / "broken.yaml"
    script.write_text("- {purpose: suitability, reply: not a JSON object}\n", encoding="utf-8")
    result = cli("run", shop, PRICE, "--llm-script", script)
    assert result.exit_code == 1
    assert "suitability (LLM purpose) failed" in result.stdout
    assert "--debug" not in result.stderr
