"""The playground's view of `runner eval` runs (runner.playground.evals): the served pipeline's
runs listed, a run's report served as it was written (and allowed to load nothing), the traces
it links to; names in the path that are not a run's or a trace's are refused."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from runner.eval.evaluate import EvalOptions, evaluate
from runner.eval.setup import EvalSpec


@pytest.fixture(scope="module")
def run(support: Path) -> str:
    """An evaluation of the served pipeline, written where `runner eval` writes by default."""
    outcome = evaluate(
        EvalSpec(support), support.parent / "eval" / "questions.csv", EvalOptions(progress=False)
    )
    return outcome.folder.name


def test_the_runs_of_a_served_pipeline_are_listed_with_their_metrics(
    playground: str, run: str
) -> None:
    page = httpx.get(f"{playground}support/evals/")
    assert page.status_code == 200
    assert f'<a href="{run}/">{run}</a>' in page.text
    assert "hit@k" in page.text


def test_a_runs_report_is_served_and_may_load_nothing(playground: str, run: str) -> None:
    page = httpx.get(f"{playground}support/evals/{run}/")
    assert page.status_code == 200
    assert "<svg" in page.text
    assert page.headers["content-security-policy"].startswith("default-src 'none'")


def test_the_trace_a_report_links_to_is_served(playground: str, run: str) -> None:
    trace = httpx.get(f"{playground}support/evals/{run}/traces/descale-how.jsonl")
    assert trace.status_code == 200
    assert '"event": "retrieval"' in trace.text


@pytest.mark.parametrize(
    "path",
    ["support/evals/..%2F..%2F/", "support/evals/nope/", "nowhere/evals/"],
)
def test_a_name_that_is_no_run_is_refused(playground: str, run: str, path: str) -> None:
    assert httpx.get(playground + path).status_code == 404


def test_a_trace_name_outside_the_runs_traces_is_refused(playground: str, run: str) -> None:
    page = httpx.get(f"{playground}support/evals/{run}/traces/..%2Fsummary.json")
    assert page.status_code == 404
