"""The playground's view of `runner eval` runs (runner.playground.evals): the served pipeline's
runs listed, a run's report served as it was written (and allowed to load nothing), the traces
it links to; names in the path that are not a run's or a trace's are refused."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
import pytest

from runner.eval.evaluate import EvalOptions, evaluate
from runner.eval.setup import EvalSpec
from tests.playground.conftest import playground_client


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


def test_the_runs_list_says_how_many_questions_ended_in_an_error(
    playground: str, run: str, support: Path
) -> None:
    page = httpx.get(f"{playground}support/evals/")
    assert "<th>errors</th>" in page.text
    assert "<th>relevance</th>" in page.text


def test_a_run_with_crashed_questions_shows_them(tmp_path: Path) -> None:
    from runner.playground.evals import _index_page

    page = _index_page(
        "d", [{"name": "r", "finished": True, "metrics": {"questions": 60, "errors": 1 / 3}}]
    )
    assert '<b class="errors">20</b>' in page


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


def test_the_chat_page_links_to_the_served_pipelines_evaluations(service: Any) -> None:
    page = playground_client(service).get("/playground/support/")
    assert page.status_code == 200
    assert re.search(r'<a href="/playground/support/evals/"[^>]*>Evaluations</a>', page.text)


def test_with_tokens_the_evaluations_ask_for_a_login_first(service: Any, run: str) -> None:
    client = playground_client(service, tokens=("token-a",))
    for path in ("/playground/support/evals/", f"/playground/support/evals/{run}/"):
        response = client.get(path)
        assert response.status_code == 303 and response.headers["location"] == "/playground/login"
    client.post("/playground/login", data={"token": "token-a"})
    assert run in client.get("/playground/support/evals/").text
