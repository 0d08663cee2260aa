"""bench/realmodel.py's arithmetic, without the model: usable replies by purpose, rounds
answered, calls beyond one per request, and the README section written from them."""

from __future__ import annotations

from bench import realmodel
from runner.llm.accounting import CallRecord


def call(
    purpose: str, outcome: str, structured: str | None, notice: str | None = None
) -> CallRecord:
    return CallRecord(
        purpose=purpose,
        tool=None,
        provider="openai_like",
        model="smollm2",
        latency_ms=1.0,
        prompt_tokens=10,
        completion_tokens=2,
        cached=False,
        attempt=1,
        outcome=outcome,
        structured=structured,
        notice=notice,
    )


CALLS = [
    call("suitability", "error", "json_schema", notice="refused"),
    call("suitability", "ok", "json_object"),
    call("gatekeeper", "invalid", "json_object"),
    call("gatekeeper", "ok", "json_object"),
    call("answer", "ok", None),
]
ROUNDS = [
    {
        "outcome": "answer",
        "llm_calls": 5,
        "prompt_tokens": 50,
        "completion_tokens": 10,
        "seconds": 4.0,
        "replies": [["gatekeeper", "ok", "json_object"]],
    },
    {
        "outcome": "error",
        "llm_calls": 0,
        "prompt_tokens": 0,
        "completion_tokens": 0,
        "seconds": 2.0,
        "replies": [],
    },
]


def test_usable_replies_count_structured_calls_that_got_an_answer() -> None:
    totals = realmodel._totals(ROUNDS, CALLS)
    assert totals["usable_by_purpose"] == {"suitability": [1, 1], "gatekeeper": [1, 2]}
    assert totals["usable"] == round(2 / 3, 3)


def test_refusals_and_re_asks_are_the_extra_calls() -> None:
    totals = realmodel._totals(ROUNDS, CALLS)
    assert (totals["extra_calls"], totals["refused_calls"]) == (2, 1)
    assert (totals["rounds_answered"], totals["rounds"]) == (1, 2)
    assert totals["seconds_per_round"] == 3.0


def test_the_section_shows_every_mode() -> None:
    mode = {"mode": "json_schema", **realmodel._totals(ROUNDS, CALLS), "per_round": ROUNDS}
    results = {
        "command": "python -m bench realmodel",
        "date": "2026-12-01",
        "machine": {"cpus": 2},
        "server": "0.3.36",
        "max_tokens": 256,
        "modes": [mode],
    }
    text = realmodel.section(results)
    assert "| `json_schema` | 67% | suitability 1/1, gatekeeper 1/2 | 1 of 2 |" in text
    assert "the deep search itself did not run" in text  # no missing_info call in any round
