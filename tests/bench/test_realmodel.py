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


def _mode(mode: str, usable: dict, answered: int, rounds: int, extra: int, refused: int) -> dict:
    good = sum(ok for ok, _ in usable.values())
    return {
        "mode": mode,
        "usable_by_purpose": usable,
        "usable": round(good / sum(total for _, total in usable.values()), 3),
        "rounds": rounds,
        "rounds_answered": answered,
        "extra_calls": extra,
        "refused_calls": refused,
    }


def test_the_summary_shows_the_targets_constrained_beside_unconstrained() -> None:
    from bench.summary_quality import realmodel_rows

    results = {
        "targets": {"usable_structured": 1.0, "rounds_answered_of_10": 9},
        "modes": [
            _mode("json_schema", {"suitability": [7, 7], "extract": [1, 1]}, 10, 10, 1, 1),
            _mode("prompt", {"suitability": [1, 4]}, 3, 9, 5, 0),
        ],
    }
    usable, answered, re_asked = realmodel_rows(results)
    assert usable[1:] == ["100% (8 of 8)", "without constraint 25% (1 of 4)", "100%", "met"]
    assert answered[1:] == ["10 of 10", "without constraint 3 of 9", "≥ 9 of 10", "met"]
    assert re_asked[1] == "0 (1 refused request)" and re_asked[4] == "met"


def test_the_summary_flags_rounds_answered_below_the_target() -> None:
    from bench.summary_quality import realmodel_rows

    results = {
        "targets": {"usable_structured": 1.0, "rounds_answered_of_10": 9},
        "modes": [_mode("json_schema", {"suitability": [6, 7]}, 8, 10, 1, 0)],
    }
    usable, answered, _ = realmodel_rows(results)
    assert "missed" in usable[4] and "missed" in answered[4] and usable[2] == ""


def test_a_rounds_calls_are_read_from_its_trace() -> None:
    from types import SimpleNamespace

    from runner.trace import Trace

    trace = Trace()
    for record in CALLS:
        fields = record.to_json()
        fields.pop("task", None)
        trace.emit("llm.call", "1", **fields)
    calls = realmodel.round_calls(SimpleNamespace(trace=trace))
    assert [(c.purpose, c.outcome, c.structured) for c in calls] == [
        (c.purpose, c.outcome, c.structured) for c in CALLS
    ]
    assert [c.notice for c in calls] == [c.notice for c in CALLS]
