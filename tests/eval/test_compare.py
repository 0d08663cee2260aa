"""A run against its baseline: which questions got worse or better, and why; CI's gates."""

from __future__ import annotations

from typing import Any

import pytest

from runner.eval.compare import compare, question_changes
from runner.eval.gates import Floor, GateError, failed_gates, parse_floor


def rec(**values: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "id": "q",
        "question": "?",
        "line": 2,
        "gold": ["leave.md"],
        "outcome": "answer",
        "degraded": False,
        "rank": 1,
        "sourced": True,
        "checks": [],
        "groundedness": 1.0,
        "judge": None,
        "warnings": [],
    }
    return {**base, **values}


def reasons(before: dict[str, Any], after: dict[str, Any]) -> list[tuple[str, bool]]:
    return [(reason.text, reason.better) for reason in question_changes(before, after)]


def test_a_lost_source_is_a_reason_for_worse() -> None:
    assert reasons(rec(), rec(sourced=False)) == [
        ("a source lost: the answer no longer cites leave.md", False)
    ]


def test_a_failed_answer_check_is_a_reason_for_worse() -> None:
    before = rec(checks=[{"text": "five days", "passed": True}])
    after = rec(checks=[{"text": "five days", "passed": False}])
    assert reasons(before, after) == [("an answer check failed: 'five days' is missing", False)]


def test_a_degraded_round_is_a_reason_for_worse_with_what_failed() -> None:
    after = rec(degraded=True, warnings=["tool policy_rag failed: timeout"])
    assert reasons(rec(), after) == [("the round degraded: tool policy_rag failed: timeout", False)]


def test_a_gold_page_ranked_higher_is_a_reason_for_better() -> None:
    assert reasons(rec(rank=3), rec(rank=1)) == [("the gold source's rank went from 3 to 1", True)]


def test_a_gold_page_no_longer_retrieved_says_where_it_was() -> None:
    assert reasons(rec(rank=2), rec(rank=None)) == [
        ("the gold source is no longer retrieved (it was rank 2)", False)
    ]


def test_a_small_change_of_groundedness_is_not_a_change() -> None:
    assert reasons(rec(groundedness=1.0), rec(groundedness=0.9)) == []
    assert reasons(rec(groundedness=1.0), rec(groundedness=0.5)) == [
        ("groundedness 1.00 → 0.50", False)
    ]


def test_an_answer_that_no_longer_addresses_the_question_is_worse() -> None:
    assert reasons(rec(relevance=1.0), rec(relevance=0.0)) == [("relevance 1.00 → 0.00", False)]
    judged = {"relevance": {"score": 0.2, "reason": "About the dryer."}}
    assert reasons(
        rec(judge={"relevance": {"score": 1, "reason": "On it."}}), rec(judge=judged)
    ) == [("judged relevance 1.00 → 0.20: About the dryer.", False)]


def test_a_question_with_a_loss_and_a_gain_counts_as_worse() -> None:
    comparison = compare([rec(rank=1, sourced=False)], {}, [rec(rank=3, sourced=True)], {}, "base")
    assert [change.id for change in comparison.worse] == ["q"]
    assert comparison.better == []
    assert comparison.regressed


def test_questions_only_in_one_run_are_new_or_gone() -> None:
    comparison = compare([rec(id="a")], {}, [rec(id="b")], {}, "base")
    assert (comparison.new, comparison.gone) == (["a"], ["b"])


def test_a_metric_change_says_whether_it_is_better() -> None:
    comparison = compare([], {"hit@k": 0.8, "errors": 0.1}, [], {"hit@k": 0.6, "errors": 0.0}, "b")
    assert comparison.metrics["hit@k"]["direction"] == "better"
    assert comparison.metrics["errors"]["direction"] == "worse"


def test_fail_under_reads_a_share_or_a_percentage() -> None:
    assert parse_floor("hit@k=0.8") == Floor("hit@k", 0.8)
    assert parse_floor("sourced=75%") == Floor("sourced", 0.75)


def test_fail_under_suggests_the_metric_meant() -> None:
    with pytest.raises(GateError, match="did you mean `sourced`"):
        parse_floor("sorced=0.8")


def test_a_metric_under_its_floor_fails_the_gate() -> None:
    failures = failed_gates({"hit@k": 0.7}, [Floor("hit@k", 0.8)], None, fail_on_regression=False)
    assert failures == ["hit@k is 0.7, under 0.8"]
    assert failed_gates({"hit@k": 0.9}, [Floor("hit@k", 0.8)], None, fail_on_regression=False) == []
