"""Running cases: sessions, turns, the LLM each case gets (runner/testing/execute.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from runner.testing import run_files
from tests.testing.conftest import COMPARE_RULES

Write = Callable[..., Path]


def only_case(path: Path):  # type: ignore[no-untyped-def]
    [report] = run_files([path])
    assert not report.diagnostics and report.error is None, report.diagnostics or report.error
    [case] = report.cases
    return case


def test_a_case_that_meets_its_expectations_passes(write: Write) -> None:
    path = write(
        COMPARE_RULES
        + """
cases:
  - name: compare
    turns:
      - message: Compare the KD-450 and the KW-620
        expect:
          outcome: answer
          answer: 100 EUR more
          ran: ["1.1:specs", "1.2:specs", "1:compare"]
          skipped: ["1.3", "1.4"]
          sources: [products.csv]
          llm_calls: {decompose: 1, suitability: 1, tool: 1, total: 3}
"""
    )
    case = only_case(path)
    assert case.passed, case.turns[0].differences


def test_a_failing_case_names_every_difference(write: Write) -> None:
    path = write(
        COMPARE_RULES
        + """
cases:
  - name: wrong
    turns:
      - message: Compare the KD-450 and the KW-620
        expect:
          outcome: clarification
          answer: {contains: [cheaper], not_contains: [KD-450], matches: "^Nothing"}
          ran: ["1.1:price"]
          not_ran: ["1:compare"]
          skipped: ["1.1"]
          not_skipped: ["1.3"]
          sources: [{document: products.csv, page: 2}]
          llm_calls: {decompose: {max: 0}, total: 5}
"""
    )
    case = only_case(path)
    assert not case.passed
    assert case.turns[0].differences == [
        "outcome: expected clarification, got answer",
        "answer does not contain 'cheaper'",
        "answer contains 'KD-450', which it must not",
        "answer does not match /^Nothing/",
        "source missing: products.csv p. 2",
        "did not run: 1.1:price",
        "ran, but must not have: 1:compare",
        "not skipped: 1.1 (it is in the task tree)",
        "did not run: task 1.3 (it is in the task tree)",
        "LLM calls for decompose: expected at most 0, got 1 (task 1: 1)",
        "LLM calls for total: expected exactly 5, got 3 (task 1: 3)",
    ]


def test_c24_an_answer_turn_continues_the_clarification(write: Write) -> None:
    path = write(
        COMPARE_RULES
        + """
cases:
  - name: price with a question
    turns:
      - message: What does it cost?
        expect:
          outcome: clarification
          question: Which model do you mean
          llm_calls: {suitability: 1}
      - answer: The KW-620
        expect:
          outcome: answer
          answer: 449 EUR
          ran: ["1:price"]
          llm_calls: {suitability: 0, answer: 1}
"""
    )
    case = only_case(path)
    assert case.passed, [turn.differences for turn in case.turns]
    assert [turn.result["outcome"] for turn in case.turns] == ["clarification", "answer"]


def test_an_answer_turn_after_no_question_fails_with_the_fix(write: Write) -> None:
    path = write(
        COMPARE_RULES
        + """
cases:
  - name: no question to answer
    turns:
      - message: What does the KW-620 cost?
      - answer: The KW-620
"""
    )
    case = only_case(path)
    assert not case.passed
    [difference] = case.turns[1].differences
    assert "asked no clarifying question" in difference and "`message:`" in difference


def test_a_message_after_a_question_must_be_written_as_its_answer(write: Write) -> None:
    path = write(
        COMPARE_RULES
        + """
cases:
  - name: a new message while a question waits
    turns:
      - message: What does it cost?
      - message: Compare the KD-450 and the KW-620
"""
    )
    case = only_case(path)
    [difference] = case.turns[1].differences
    assert "would be taken as its answer" in difference and "`answer:`" in difference


def test_a_failed_turn_stops_the_case(write: Write) -> None:
    path = write(
        COMPARE_RULES
        + """
cases:
  - name: stops
    turns:
      - message: What does it cost?
        expect: {outcome: answer}
      - answer: The KW-620
"""
    )
    case = only_case(path)
    assert len(case.turns) == 1 and not case.passed


def test_a_case_s_rules_come_before_its_file_s(write: Write) -> None:
    path = write(
        COMPARE_RULES
        + """
cases:
  - name: own answer
    llm:
      script:
        - {purpose: answer, reply: "The case's own answer."}
    turns:
      - message: What does the KW-620 cost?
        expect: {answer: "case's own answer"}
  - name: file answer
    turns:
      - message: What does the KW-620 cost?
        expect: {answer: "449 EUR"}
"""
    )
    [report] = run_files([path])
    assert [case.passed for case in report.cases] == [True, True]


def test_a_case_s_own_script_wins_over_its_file_s_offline_provider(write: Write) -> None:
    path = write(
        """
llm: {provider: offline}
cases:
  - name: scripted answer
    llm:
      script:
        - {purpose: answer, reply: "The case's own answer."}
    turns:
      - message: What does the KW-620 cost?
        expect: {answer: "case's own answer"}
  - name: offline answer
    turns:
      - message: What is the price of the KW-620?
        expect: {outcome: answer, sources: [products.csv]}
"""
    )
    [report] = run_files([path])
    assert [case.passed for case in report.cases] == [True, True], [
        turn.differences for case in report.cases for turn in case.turns
    ]


def test_the_file_s_offline_provider_answers_what_the_case_s_rules_do_not() -> None:
    from runner.testing.model import LLMSpec

    case = LLMSpec(script=("rule",))  # type: ignore[arg-type]
    merged = case.then(LLMSpec(provider="offline"))
    assert (merged.provider, merged.fallback) == ("scripted", "offline")
    assert LLMSpec().then(LLMSpec(provider="offline")).provider == "offline"
    assert LLMSpec(provider="offline").then(LLMSpec(script=("r",))).provider == "offline"  # type: ignore[arg-type]


def test_a_rule_s_times_count_per_case(write: Write) -> None:
    path = write(
        """
llm:
  script:
    - {purpose: suitability, reply: {compare: false, price: true}}
    - {purpose: decompose, reply: {products: []}}
    - {purpose: answer, times: 1, reply: "First."}
    - {purpose: answer, reply: "Again."}
cases:
  - name: one
    turns:
      - message: What does the KW-620 cost?
        expect: {answer: First.}
  - name: two
    turns:
      - message: What does the KW-620 cost?
        expect: {answer: First.}
"""
    )
    [report] = run_files([path])
    assert [case.passed for case in report.cases] == [True, True]


def test_every_case_starts_on_a_fresh_session(write: Write) -> None:
    # the first case leaves a question pending; the second case's message is a new question
    path = write(
        COMPARE_RULES
        + """
cases:
  - name: leaves a question pending
    turns:
      - message: What does it cost?
        expect: {outcome: clarification}
  - name: starts afresh
    turns:
      - message: Compare the KD-450 and the KW-620
        expect:
          outcome: answer
          ran: ["1:compare"]
"""
    )
    [report] = run_files([path])
    assert [case.passed for case in report.cases] == [True, True]


def test_runner_llm_in_the_environment_does_not_replace_the_case_s_llm(
    write: Write, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RUNNER_LLM", "offline")
    path = write(
        COMPARE_RULES
        + """
cases:
  - name: scripted
    turns:
      - message: What does the KW-620 cost?
        expect: {answer: "449 EUR"}
"""
    )
    assert only_case(path).passed


def test_without_an_llm_block_the_pipeline_s_own_scripted_llm_answers(write: Write) -> None:
    path = write(
        """
cases:
  - name: own rules
    turns:
      - message: What does the KW-620 cost?
        expect: {answer: "pipeline's own answer", ran: ["1:price"]}
"""
    )
    assert only_case(path).passed


def test_offline_provider_runs_without_rules(write: Write) -> None:
    path = write(
        """
llm: {provider: offline}
cases:
  - name: offline
    turns:
      - message: What is the price of the KW-620?
        expect:
          outcome: answer
          sources: [products.csv]
"""
    )
    case = only_case(path)
    assert case.passed, case.turns[0].differences


def test_a_networked_pipeline_llm_is_never_called(write: Write, shop: Path) -> None:
    pipeline = shop / "shop.yaml"
    text = pipeline.read_text(encoding="utf-8")
    start, end = text.index("llm:"), text.index("tools:")
    pipeline.write_text(text[:start] + "llm: {provider: ollama, model: llama3.1}\n" + text[end:])
    path = write(
        """
cases:
  - name: would need a model
    turns:
      - message: What does the KW-620 cost?
"""
    )
    case = only_case(path)
    assert not case.passed
    assert "tests never call" in (case.error or "")


def test_a_request_no_rule_answers_is_shown_in_the_failure(write: Write) -> None:
    path = write(
        """
llm:
  script:
    - {purpose: suitability, reply: {compare: false, price: true}}
cases:
  - name: no answer rule
    turns:
      - message: What does the KW-620 cost?
        expect: {outcome: answer}
"""
    )
    case = only_case(path)
    turn = case.turns[0]
    assert turn.differences == ["outcome: expected answer, got error"]
    assert "no rule for this request" in turn.result["error"]


def test_a_tool_error_is_listed_among_the_round_s_problems(write: Write) -> None:
    path = write(
        """
llm:
  script:
    - {purpose: decompose, reply: {products: [KD-450, KW-620]}}
    - {purpose: suitability, reply: {compare: true, price: false}}
    - {purpose: answer, reply: "Answer."}
cases:
  - name: the compare tool has no rule
    turns:
      - message: Compare the KD-450 and the KW-620
        expect: {ran: ["1:compare"]}
"""
    )
    turn = only_case(path).turns[0]
    failed, degraded = turn.differences
    assert failed == "ran but failed: 1:compare (see the run's problems below)"
    assert degraded.startswith("the round is degraded: task 1: tool 'compare' failed")
    assert any(p.startswith("tool.error on task 1: compare:") for p in turn.problems)


def test_a_recorded_cassette_replays(write: Write, shop: Path, cli: Callable[..., Result]) -> None:
    recorded = cli(
        "run",
        shop / "shop.yaml",
        "What does the KW-620 cost?",
        "--record",
        shop / "tape.yaml",
        "--state",
        shop / "state.sqlite",
    )
    assert recorded.exit_code == 0, recorded.output
    path = write(
        """
llm: {cassette: tape.yaml}
cases:
  - name: replayed
    turns:
      - message: What does the KW-620 cost?
        expect: {answer: "pipeline's own answer", llm_calls: {suitability: 1, answer: 1}}
"""
    )
    assert only_case(path).passed


# --- a degraded round (a failed tool, coordinator or task) is a failure unless expected -------

# compare's extraction has no scripted rule: its decomposition fails, the round goes on
DEGRADING = """
llm:
  script:
    - {purpose: suitability, reply: {compare: false, price: true}}
    - {purpose: answer, reply: "The KW-620 costs 449 EUR."}
cases:
  - name: degraded
    turns:
      - message: What does the KW-620 cost?
        expect: {answer: 449 EUR%s}
"""


def test_a_degraded_round_fails_its_turn_and_says_what_failed(write: Write) -> None:
    case = only_case(write(DEGRADING % ""))
    assert not case.passed
    [difference] = case.turns[0].differences
    assert difference.startswith(
        "the round is degraded: task 1: coordinator 'compare' failed to decompose it"
    )
    assert difference.endswith("say `degraded: true` in its expect")


def test_a_case_that_expects_the_degradation_passes(write: Write) -> None:
    assert only_case(write(DEGRADING % ", degraded: true")).passed


def test_expecting_a_degradation_that_does_not_happen_fails(write: Write) -> None:
    path = write(
        COMPARE_RULES
        + """
cases:
  - name: clean
    turns:
      - message: What does the KW-620 cost?
        expect: {answer: 449 EUR, degraded: true}
"""
    )
    [difference] = only_case(path).turns[0].differences
    assert difference.startswith("expected a degraded round")


def test_degraded_false_states_the_default_explicitly(write: Write) -> None:
    [difference] = only_case(write(DEGRADING % ", degraded: false")).turns[0].differences
    assert difference.startswith("expected no degraded round, got one: task 1: coordinator")
