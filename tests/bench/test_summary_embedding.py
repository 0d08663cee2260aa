"""The summary row of the embedding runtimes: 10,000 pages on the default runtime (onnxruntime on
int8 weights), held to five minutes, numpy beside it."""

from __future__ import annotations

from bench.summary_cost import embed_runtime_rows


def results(int8_minutes: float) -> dict:
    return {
        "runtimes": {
            "numpy": {"minutes_for_10k_pages": 8.7, "speed_vs_numpy": 1.0},
            "onnx": {"minutes_for_10k_pages": 7.7, "speed_vs_numpy": 1.13},
            "onnx-int8": {"minutes_for_10k_pages": int8_minutes, "speed_vs_numpy": 2.57},
        }
    }


def test_the_row_reads_the_int8_runtime_and_names_numpy_beside_it() -> None:
    [row] = embed_runtime_rows(results(3.4))
    assert row[1] == "3.4 min (2.57× numpy)" and row[2] == "numpy 8.7 min"
    assert row[-1] == "met"


def test_more_than_five_minutes_misses_the_target() -> None:
    [row] = embed_runtime_rows(results(5.5))
    assert row[-1].startswith("**missed**")
