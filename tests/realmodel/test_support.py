"""The support pipeline on SmolLM2-135M through llama.cpp's server with constrained decoding
(issue 12): one round per kind of message, the cases of tests/realmodel/cases/support.yaml run
as `runner test --llm` runs them, on the pipeline with the `llm` block below. What a 135M model
can be held to: every round ends in an answer or a clarifying question, no structured reply is
unusable, the clarification's answer continues the round, and the lookups the pipeline forces
run. Never the wording."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from bench import llama_server
from runner.config.model import LLMConfig
from runner.testing import CaseReport, TestRun, format_reports
from runner.testing.expect import walk

CASES = Path(__file__).parent / "cases" / "support.yaml"


def model_llm(server: Any) -> LLMConfig:
    """The pipeline's `llm` block for the model: the default structured mode (json_schema,
    which this server refuses once), a timeout for one CPU thread on a busy machine, answers
    capped (a 135M model often writes until max_tokens), the server's window, and the repeat
    penalty docs/llm.md gives local models."""
    return LLMConfig(
        provider="openai_like",
        model=llama_server.MODEL_ALIAS,
        api_base=server.url,
        timeout_s=600.0,
        max_tokens=256,
        concurrency=1,
        context_window=llama_server.CONTEXT_WINDOW,
        sampling={"repeat_penalty": 1.1},
    )


@pytest.fixture(scope="module")
def cases(model_server: Any) -> list[CaseReport]:
    run = TestRun(llm_override="openai_like")  # the provider: the block below in full
    load = run.load_pipeline
    run.load_pipeline = lambda path: dataclasses.replace(load(path), llm=model_llm(model_server))
    reports = run.run([CASES])
    report_file = Path(__file__).resolve().parents[2] / ".runner" / "test-llm-report.txt"
    report_file.write_text(format_reports(reports, "text") + "\n", encoding="utf-8")
    assert reports[0].error is None and not reports[0].diagnostics, reports[0].error
    return reports[0].cases


def rounds(cases: list[CaseReport]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    for case in cases:
        for turn in case.turns:
            if turn.result is not None:
                yield f"{case.case.name} / {turn.turn.text!r}", turn.result


def test_every_case_passes_its_own_expectations(cases: list[CaseReport]) -> None:
    failed = [case for case in cases if not case.passed]
    assert not failed, format_reports_of(failed)


def test_every_round_ends_in_an_answer_or_a_clarifying_question(
    cases: list[CaseReport],
) -> None:
    outcomes = {name: result["outcome"] for name, result in rounds(cases)}
    assert len(outcomes) >= 6  # five kinds, the clarification in two rounds
    assert {name: o for name, o in outcomes.items() if o not in ("answer", "clarification")} == {}


def test_no_structured_reply_was_unusable(cases: list[CaseReport]) -> None:
    unusable = {
        name: {p: e["invalid"] for p, e in result["stats"]["by_purpose"].items() if "invalid" in e}
        for name, result in rounds(cases)
    }
    assert {name: bad for name, bad in unusable.items() if bad} == {}


def test_a_comparison_runs_the_forced_lookup_on_every_subtask(cases: list[CaseReport]) -> None:
    comparison = next(case for case in cases if "comparison" in case.case.name)
    assert comparison.turns
    result = comparison.turns[0].result
    assert result is not None
    forced = [task for task in walk(result["tasks"]) if "product_lookup" in task["required_tools"]]
    assert len(forced) == 2, result["tasks"]  # one subtask per product the message names
    for task in forced:
        ran = {tool["name"]: tool["status"] for tool in task.get("tools", ())}
        assert ran.get("product_lookup") == "done", task
    assert any(tool["name"] == "compare_products" for tool in result["tasks"]["tools"])


def test_the_clarifications_answer_continues_the_round(cases: list[CaseReport]) -> None:
    warranty = next(case for case in cases if "warranty" in case.case.name)
    assert [turn.result["outcome"] for turn in warranty.turns if turn.result][:1] == [
        "clarification"
    ]
    assert len(warranty.turns) == 2 and warranty.turns[1].result is not None


def test_the_warranty_question_asks_which_model_whatever_the_model_extracted(
    cases: list[CaseReport],
) -> None:
    warranty = next(case for case in cases if "warranty" in case.case.name)
    first = warranty.turns[0].result
    assert first is not None and first["outcome"] == "clarification", first
    assert "Which Kestrel model" in (first.get("question") or "")
    ran = {tool["name"]: tool["status"] for tool in first["tasks"]["tools"]}
    assert ran.get("warranty_check") == "asked", ran


def format_reports_of(failed: list[CaseReport]) -> str:
    lines = []
    for case in failed:
        lines.append(f"{case.case.name}: {case.error or ''}")
        for turn in case.turns:
            lines.extend(f"  {turn.turn.text!r}: {d}" for d in turn.differences)
            lines.extend(f"  problem: {p}" for p in turn.problems)
    return "\n".join(lines)
