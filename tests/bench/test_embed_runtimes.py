"""Smoke test of bench.embed_runtimes' report: a results file of its shape becomes the README
section, a row a runtime with its speed against numpy's (the measurement needs the model)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.embed_runtimes import RUNTIMES, readme_section
from bench.wording import read_set


def results() -> dict:
    runtimes = {
        runtime: {
            "pages_per_second": 10.0 * (index + 1),
            "speed_vs_numpy": float(index + 1),
            "minutes_for_10k_pages": round(1000 / (60 * (index + 1)), 1),
            "first_use_seconds": 1.5,
            "cosine_with_numpy": {"mean": 1.0 - index / 100, "min": 0.99 - index / 100},
            "questions": {
                "at1": 0.5,
                "at5": 0.75,
                "same_first_as_numpy": 1.0,
                "top5_overlap_with_numpy": 0.9,
            },
        }
        for index, runtime in enumerate(RUNTIMES)
    }
    return {
        "date": "2026-12-01",
        "command": "python -m bench.embed_runtimes",
        "machine": {"cpus": 2},
        "pages": 2000,
        "tokens_per_page_mean": 180,
        "questions": 200,
        "onnx_graph_mb": {"fp32": 86.1, "int8": 55.7},
        "onnx_install_mb": 100.0,
        "runtimes": runtimes,
    }


def test_each_runtime_is_a_row_with_its_speed_against_numpy_s() -> None:
    section = readme_section(results())
    rows = [line for line in section.splitlines() if line.startswith(("| numpy", "| onnx"))]
    assert [row.split(" | ")[0].strip("| ") for row in rows] == list(RUNTIMES)
    assert "| 30.0 (3.0×) | 5.6 min | 0.98000 / 0.97000 |" in rows[2]


@pytest.mark.usefixtures("embed_model")
def test_the_benchmark_runs_on_a_tiny_docs_folder(
    docs: Path, questions: Path, readme_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The whole benchmark, every runtime, on the fixture's pages and two questions of its own
    (the model is what the `embed` extra installs: skipped without it, as tests/embed is)."""
    from bench import embed_runtimes

    monkeypatch.setattr(embed_runtimes, "PYDOCS", docs)
    monkeypatch.setattr(embed_runtimes, "QUESTION_SETS", ("tiny",))
    monkeypatch.setattr(embed_runtimes, "read_set", lambda name: read_set(name, questions))
    monkeypatch.setenv("RUNNER_CACHE_DIR", str(tmp_path / "cache"))  # main sets it: restored
    embed_runtimes.main(["4"])
    results = json.loads((readme_path.parent / "results" / "embed_runtimes.json").read_text())
    assert (results["pages"], results["questions"]) == (4, 2)
    assert set(results["runtimes"]) == set(RUNTIMES)
    numpy = results["runtimes"]["numpy"]
    assert numpy["cosine_with_numpy"]["min"] > 0.999 and numpy["questions"]["at5"] == 1.0
    assert results["runtimes"]["onnx"]["cosine_with_numpy"]["min"] > 0.99
    assert f"## {embed_runtimes.TITLE}" in readme_path.read_text()
