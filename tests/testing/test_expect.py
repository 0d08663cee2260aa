"""The expectation checks on a round's result object (runner/testing/expect.py)."""

from __future__ import annotations

from typing import Any

from runner.testing.expect import check
from runner.testing.model import CallBound, Expect, SourceExpect, TextExpect

RESULT: dict[str, Any] = {
    "outcome": "answer",
    "answer": "The KW-620 costs 449 EUR.",
    "question": None,
    "error": None,
    "sources": [
        {"document": "policies/warranty-policy.md", "page": 3},
        {"document": "products.csv", "heading": "KW-620"},
    ],
    "tasks": {
        "task_no": "1",
        "skipped": False,
        "tools": [{"key": "1:price", "status": "done"}, {"key": "1:compare", "status": "failed"}],
        "children": [
            {"task_no": "1.1", "skipped": False, "tools": [{"key": "1.1:specs", "status": "done"}]},
            {"task_no": "1.2", "skipped": True, "tools": [], "children": []},
        ],
    },
    "stats": {"llm_calls": 3, "by_purpose": {"suitability": {"calls": 1}, "answer": {"calls": 2}}},
}


def test_an_empty_expectation_is_always_met() -> None:
    assert check(Expect(), RESULT) == []


def test_texts_are_compared_without_regard_to_case() -> None:
    expect = Expect(answer=TextExpect(contains=("kw-620 COSTS",), not_contains=("eur.",)))
    assert check(expect, RESULT) == ["answer contains 'eur.', which it must not"]


def test_matches_is_a_regular_expression_search() -> None:
    assert check(Expect(answer=TextExpect(matches=r"\d{3} EUR")), RESULT) == []
    assert check(Expect(answer=TextExpect(matches=r"^\d")), RESULT) == [
        r"answer does not match /^\d/"
    ]


def test_a_text_check_on_a_missing_text_says_so() -> None:
    assert check(Expect(question=TextExpect(contains=("model",))), RESULT) == [
        "question: expected one, but the round gave none"
    ]


def test_a_source_matches_by_the_end_of_its_path_and_its_page() -> None:
    found = Expect(sources=(SourceExpect("warranty-policy.md", 3), SourceExpect("products.csv")))
    assert check(found, RESULT) == []
    wrong_page = Expect(sources=(SourceExpect("warranty-policy.md", 4),))
    assert check(wrong_page, RESULT) == ["source missing: warranty-policy.md p. 4"]
    partial_name = Expect(sources=(SourceExpect("policy.md"),))
    assert check(partial_name, RESULT) == ["source missing: policy.md"]


def test_a_source_matches_by_its_sections_heading_whatever_its_page() -> None:
    by_heading = Expect(sources=(SourceExpect("products.csv", heading="kw-620"),))
    assert check(by_heading, RESULT) == []
    other_section = Expect(sources=(SourceExpect("products.csv", heading="KW-720X"),))
    assert check(other_section, RESULT) == ["source missing: products.csv § KW-720X"]


def test_no_sources_fails_when_the_answer_lists_some() -> None:
    [difference] = check(Expect(no_sources=True), RESULT)
    assert difference.startswith("expected no sources, got policies/warranty-policy.md p. 3")


def test_ran_takes_wildcards_and_refuses_a_failed_tool() -> None:
    assert check(Expect(ran=("1.*:specs", "1:pri*")), RESULT) == []
    assert check(Expect(ran=("1:compare",)), RESULT) == [
        "ran but failed: 1:compare (see the run's problems below)"
    ]
    assert check(Expect(ran=("2:*",)), RESULT) == ["did not run: 2:*"]


def test_not_ran_counts_a_failed_tool_as_run() -> None:
    assert check(Expect(not_ran=("1:comp*",)), RESULT) == ["ran, but must not have: 1:compare"]


def test_skipped_and_not_skipped_read_the_tree() -> None:
    assert check(Expect(skipped=("1.2",), not_skipped=("1.1",)), RESULT) == []
    assert check(Expect(skipped=("1.1", "1.9")), RESULT) == [
        "not skipped: 1.1 (it is in the task tree)",
        "not skipped: 1.9 (no such task in the tree)",
    ]


def test_llm_calls_are_exact_or_bounded_and_absent_purposes_count_zero() -> None:
    calls = (
        ("answer", CallBound(exact=2)),
        ("suitability", CallBound(min=1, max=1)),
        ("decompose", CallBound(exact=0)),
        ("total", CallBound(max=3)),
    )
    assert check(Expect(llm_calls=calls), RESULT) == []
    assert check(Expect(llm_calls=(("total", CallBound(min=4)),)), RESULT) == [
        "LLM calls for total: expected at least 4, got 3"
    ]


def test_a_wrong_call_count_names_the_tasks_the_calls_were_made_for() -> None:
    stats = {
        "llm_calls": 4,
        "by_purpose": {"suitability": {"calls": 3}, "answer": {"calls": 1}},
        "by_task": {
            "1": {"calls": 2, "by_purpose": {"suitability": 1, "answer": 1}},
            "1.1": {"calls": 2, "by_purpose": {"suitability": 2}},
        },
    }
    expect = Expect(llm_calls=(("suitability", CallBound(exact=1)), ("total", CallBound(max=2))))
    assert check(expect, {"stats": stats}) == [
        "LLM calls for suitability: expected exactly 1, got 3 (task 1: 1, task 1.1: 2)",
        "LLM calls for total: expected at most 2, got 4 (task 1: 2, task 1.1: 2)",
    ]
