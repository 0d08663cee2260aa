"""The matrix's tests, written once for two embedders: a module that imports them with
`from tests.matrix.cases import *` gives a module-scoped `meaning` fixture that makes page
vectors work for the module's rounds (tests/matrix: the stand-in word bag, so that `make test`
always runs the matrix; tests/embed: the real model, under `make test-embed`).

Every documented configuration (tests/matrix/shapes.py) asks every question through `runner
run`; a representative few — the recommended shape, hybrid search with a deep fallback, with
each gatekeeper and provider, and the default (keyword search, offline) — ask them through
`runner eval` and `runner serve` too. None may end in an error, crash, fail a tool on the way
or leave the answer or its sources empty (issue 29: the recommended shape crashed on a
passage's unhashable evidence)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.matrix.faces import eval_records, failures, run_json, serve_round, serving
from tests.matrix.shapes import QUESTIONS, Shape, questions_csv, shapes, write_folder

SHAPES = shapes()
# through eval and serve too: the recommended shape with each gatekeeper and provider, the
# default, and hybrid search without its rerank
FACED = [
    *(s for s in SHAPES if s.recommended),
    Shape("keyword", None, "offline"),
    Shape("hybrid-no-rerank", "llm", "offline"),
]


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory, meaning: str) -> Iterator[Path]:
    """The pipelines of every shape, in one folder a kind of corpus, each index built once
    (by the first round on it: the pipelines of a folder share it)."""
    root = tmp_path_factory.mktemp("matrix")
    with pytest.MonkeyPatch.context() as patch:
        for name in ("RUNNER_LLM", "RUNNER_STATE", "RUNNER_ALLOW_PYTHON"):
            patch.delenv(name, raising=False)
        for kind in ("words", "meaning"):
            folder = write_folder(root, kind, SHAPES)
            first = next(folder.glob("*.yaml"))
            assert run_json(first, QUESTIONS[0][0])["exit_code"] == 0
        yield root


def pipeline_of(root: Path, shape: Shape) -> Path:
    return root / shape.folder / f"{shape.domain}.yaml"


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_every_documented_configuration_answers_through_runner_run(
    matrix: Path, shape: Shape
) -> None:
    pipeline = pipeline_of(matrix, shape)
    for question, _ in QUESTIONS:
        result = run_json(pipeline, question)
        assert failures(result, result["trace_events"]) == [], f"{shape}: {question!r}"
        assert result["exit_code"] == 0


def test_the_matrix_covers_every_search_gatekeeper_and_provider() -> None:
    """The axes of docs/retrieval.md and docs/reference.md, each value in the matrix."""
    assert {s.search for s in SHAPES} == {"keyword", "vector", "hybrid", "hybrid-no-rerank"}
    assert {s.gatekeeper for s in SHAPES} == {None, "words", "vectors", "llm"}
    assert {s.provider for s in SHAPES} == {"offline", "scripted"}
    assert {(s.gatekeeper, s.provider) for s in SHAPES if s.recommended} == {
        (gatekeeper, provider)
        for gatekeeper in ("vectors", "llm")
        for provider in ("offline", "scripted")
    }


@pytest.mark.parametrize("shape", FACED, ids=str)
def test_the_recommended_configurations_answer_a_question_set_through_runner_eval(
    matrix: Path, shape: Shape, tmp_path: Path
) -> None:
    questions = questions_csv(tmp_path / "questions.csv")
    records = eval_records(pipeline_of(matrix, shape), questions, tmp_path / "run")
    assert [record["question"] for record in records] == [q for q, _ in QUESTIONS]
    for record in records:
        assert failures(record) == [], f"{shape}: {record['question']!r}"


@pytest.fixture(scope="module")
def served(matrix: Path) -> Iterator[httpx.Client]:
    with serving([pipeline_of(matrix, shape) for shape in FACED]) as client:
        yield client


@pytest.mark.parametrize("shape", FACED, ids=str)
def test_the_recommended_configurations_answer_through_runner_serve(
    served: httpx.Client, shape: Shape
) -> None:
    for question, _ in QUESTIONS:
        result = serve_round(served, shape.domain, question)
        assert failures(result) == [], f"{shape}: {question!r}"
