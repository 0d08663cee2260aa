"""The summary rows of the multi-part benchmark: the prompt tokens judged over the whole set
(issue 33's target), the worst question beside them, and the answer checks held against
LlamaIndex's (the tokens count at equal answer quality)."""

from __future__ import annotations

from typing import Any

from bench.summary_cost import multipart_rows


def _system(prompt_tokens: int, calls: int = 2) -> dict[str, Any]:
    return {
        "calls": calls,
        "prompt_tokens": prompt_tokens,
        "other_prompt_tokens": prompt_tokens // 4,
        "wall_over_critical": 1.01,
    }


def _results(
    runner_tokens: int, llama_tokens: int, worst: float, held: tuple[int, int]
) -> dict[str, Any]:
    runner, llama = _system(runner_tokens), _system(llama_tokens, 5)
    return {
        "questions": [{"runner": runner, "llamaindex": llama}],
        "totals": {"runner": runner, "llamaindex": llama},
        "checks": {
            "max_calls": 2,
            "calls_by_parts": {"2": [2]},
            "max_token_share": worst,
            "max_wall_over_critical": 1.01,
            "checks": 50,
            "checks_held": {"runner": held[0], "llamaindex": held[1]},
        },
        "targets": {"max_calls": 3, "max_token_share": 0.5, "max_wall_over_critical": 1.1},
    }


def _row(results: dict[str, Any], starts: str) -> list[str]:
    return next(row for row in multipart_rows(results) if row[0].startswith(starts))


def test_the_token_target_is_met_by_the_whole_set_though_one_question_is_over() -> None:
    row = _row(_results(48, 100, 0.64, (34, 34)), "prompt tokens over the multi-part set")
    assert row[1].startswith("48% ")
    assert "worst question 64%" in row[1]
    assert row[-1] == "met"


def test_the_token_target_is_missed_when_the_whole_set_is_over_half() -> None:
    row = _row(_results(51, 100, 0.6, (34, 34)), "prompt tokens over the multi-part set")
    assert row[-1].startswith("**missed**")


def test_the_answer_checks_row_is_met_when_runner_holds_at_least_llamaindex_s() -> None:
    row = _row(_results(48, 100, 0.6, (34, 34)), "answer checks")
    assert row[1:3] == ["34", "LlamaIndex 34"]
    assert row[-1] == "met"


def test_the_answer_checks_row_is_missed_when_runner_holds_fewer() -> None:
    row = _row(_results(48, 100, 0.6, (25, 34)), "answer checks")
    assert row[-1].startswith("**missed**")
