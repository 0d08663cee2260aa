"""A question's metrics, each as docs/eval.md defines it, from its rounds' `runner run --json`."""

from __future__ import annotations

from typing import Any

from runner.eval.metrics import question_record, stable
from runner.eval.model import Gold, Question
from runner.eval.totals import metrics, percentile

CARRY = Gold("annual-leave-policy.md", "Carrying leave over")


def page(rank: int, document: str, heading: str = "") -> dict[str, Any]:
    return {"rank": rank, "document": document, "page": rank, "heading": heading}


def round_json(**values: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "outcome": "answer",
        "answer": "You may carry over five days.",
        "sources": [],
        "retrieval": [],
        "stats": {},
        "degraded": False,
    }
    return {**base, **values}


def record(question: Question, *rounds: dict[str, Any]) -> dict[str, Any]:
    return question_record(
        question, list(rounds), groundedness=None, judge=None, latency_ms=5.0, trace=None
    )


def test_a_gold_document_matches_a_page_whose_path_ends_with_it() -> None:
    assert Gold("leave.md").matches({"document": "hr/leave.md"})
    assert not Gold("leave.md").matches({"document": "hr/sick-leave.md"})


def test_a_gold_heading_matches_whatever_its_case_and_spacing() -> None:
    assert CARRY.matches({"document": "annual-leave-policy.md", "heading": "carrying  leave OVER"})
    assert not CARRY.matches({"document": "annual-leave-policy.md", "heading": "Notice periods"})


def test_a_gold_heading_matches_a_numbered_html_heading() -> None:
    gold = Gold("indexes-types.html", "Index Types")
    assert gold.matches({"document": "indexes-types.html", "heading": "11.2. Index Types"})
    assert gold.matches({"document": "indexes-types.html", "heading": "Chapter 11. Index Types"})


def test_the_rank_is_the_best_gold_rank_over_the_rounds_retrievals() -> None:
    first = {"tool": "rag", "pages": [page(1, "a.md"), page(2, "annual-leave-policy.md", "x")]}
    second = {
        "tool": "deep",
        "pages": [
            page(1, "b.md"),
            page(2, "c.md"),
            page(3, "annual-leave-policy.md", "Carrying leave over"),
        ],
    }
    got = record(Question("q", "?", (CARRY,)), round_json(retrieval=[first, second]))
    assert (got["rank"], got["hit@1"], got["hit@k"], got["rr"]) == (3, False, True, 0.333333)
    assert [r["rank"] for r in got["retrievals"]] == [None, 3]


def test_a_gold_never_retrieved_scores_zero_reciprocal_rank() -> None:
    got = record(Question("q", "?", (CARRY,)), round_json(retrieval=[{"pages": [page(1, "a.md")]}]))
    assert (got["rank"], got["hit@1"], got["hit@k"], got["rr"]) == (None, False, False, 0.0)


def test_retrieval_metrics_do_not_apply_to_a_question_without_sources() -> None:
    got = record(Question("q", "?"), round_json(retrieval=[{"pages": [page(1, "a.md")]}]))
    assert (got["hit@1"], got["hit@k"], got["rr"], got["sourced"]) == (None, None, None, None)


def test_sourced_means_a_gold_source_among_the_answers_sources() -> None:
    cited = round_json(
        sources=[
            {"document": "annual-leave-policy.md", "page": 3, "heading": "Carrying leave over"}
        ]
    )
    assert record(Question("q", "?", (CARRY,)), cited)["sourced"] is True
    assert record(Question("q", "?", (CARRY,)), round_json())["sourced"] is False


def test_answer_checks_are_case_insensitive_and_all_must_pass() -> None:
    got = record(Question("q", "?", answer=("FIVE days", "next year")), round_json())
    assert got["checks"] == [
        {"text": "FIVE days", "passed": True},
        {"text": "next year", "passed": False},
    ]
    assert got["checks_passed"] is False


def test_llm_calls_and_tokens_are_summed_over_both_turns_by_purpose() -> None:
    usage = {"answer": {"calls": 1, "prompt_tokens": 10, "completion_tokens": 5, "ms": 1.0}}
    clarified = round_json(outcome="clarification", answer=None, stats={"by_purpose": usage})
    answered = round_json(stats={"by_purpose": usage})
    got = record(Question("q", "?", follow_up="MF-1008"), clarified, answered)
    assert got["turns"] == 2
    assert got["llm"]["calls"] == 2
    assert got["llm"]["tokens"] == 30
    assert got["llm"]["by_purpose"]["answer"]["calls"] == 2


def test_a_degraded_round_marks_the_question_degraded() -> None:
    got = record(Question("q", "?"), round_json(degraded=True, warnings=["tool rag failed"]))
    assert got["degraded"] is True


def test_a_stable_record_leaves_out_timings_and_the_session() -> None:
    got = stable(record(Question("q", "?"), round_json(session="abc")))
    assert "latency_ms" not in got and "session" not in got


def test_a_share_is_over_the_questions_it_applies_to() -> None:
    with_gold = record(Question("a", "?", (CARRY,)), round_json())
    without = record(Question("b", "?"), round_json())
    totals = metrics([with_gold, without])
    assert totals["hit@k"] == 0.0  # one question with sources, missed
    assert totals["checks"] is None  # no question has answer checks
    assert totals["answered"] == 1.0


def test_the_latency_percentiles_are_nearest_rank() -> None:
    assert percentile([10, 20, 30, 40], 0.5) == 20
    assert percentile([10, 20, 30, 40], 0.95) == 40
    assert percentile([], 0.5) is None
