"""The streaming benchmark's harness on tiny runs: it times the first token and the whole round,
and telemetry off, on and with content capture, and its summary rows read those figures."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import streaming
from bench.summary_cost import streaming_rows

TELEMETRY = {
    "off_ms": 50.0,
    "on_over_off": 1.2,
    "content_over_off": 1.3,
    "spans_per_round": 24,
    "off_checks": {"per_round_us": 2.0},
}


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return streaming.stage(tmp_path_factory.mktemp("streaming"))


def test_the_first_token_comes_before_the_round_ends(pipeline: Path, tmp_path: Path) -> None:
    figures = streaming.time_to_first_token(pipeline, tmp_path, 0.0, 0.001, repeats=1)
    for row in figures["questions"]:
        assert 0 < row["first_token_s"] < row["round_s"]
        assert row["pieces"] > 1


def test_telemetry_is_timed_off_on_and_with_content_with_spans_made_only_on(
    pipeline: Path, tmp_path: Path
) -> None:
    cost = streaming.telemetry_cost(pipeline, tmp_path, rounds=1)
    assert cost["off_ms"] > 0 and cost["on_ms"] > 0 and cost["content_ms"] > 0
    assert cost["spans_per_round"] > 5
    assert cost["off_checks"]["events_per_round"] > 5
    assert cost["off_checks"]["calls_per_round"] > 1


def test_the_summary_rows_compare_the_first_token_with_the_round() -> None:
    results = {
        "targets": streaming.TARGETS,
        "first_token": {"questions": [{"first_token_s": 0.5, "round_s": 1.0}]},
        "telemetry": TELEMETRY,
    }
    first, off = streaming_rows(results)
    assert first[1] == "0.50 / 1.00 s (50%)" and first[-1] == "met"
    assert off[-1] == "met"


def test_a_model_round_that_ended_in_an_error_is_left_out_of_the_summary_row() -> None:
    ended = {"first_token_s": None, "round_s": 4.0, "outcome": "error", "error": "answer failed"}
    results = {
        "targets": streaming.TARGETS,
        "first_token": {"questions": [{"first_token_s": 0.5, "round_s": 1.0}]},
        "smollm2": {"questions": [ended, {"first_token_s": 2.0, "round_s": 5.0}]},
        "telemetry": TELEMETRY,
    }
    _simulated, model, _off = streaming_rows(results)
    assert model[1] == "2.00 / 5.00 s (40%)"
