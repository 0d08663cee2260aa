"""Query rewriting (purpose `rewrite`) on SmolLM2-135M: questions about the test appliances asked
in a user's words, searched by BM25 as asked and with the model's restatement. A 135M model's
restatements are measured, not trusted: the figures go to .runner/test-llm-rewrite.txt (and
the issue's bench/README.md note); the tests hold it to one usable call per question and to
keeping the question's own words, so that a restatement can add pages, never remove words."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from runner.config.model import Corpus, Pipeline
from runner.llm.prompts import Prompts
from runner.retrieval import open_corpus
from tests.realmodel.test_support import model_llm

CORPUS = Path(__file__).parents[1] / "retrieval" / "corpora" / "appliances"
# (question in a user's words, the gold page's document and heading)
QUESTIONS = [
    ("my kettle is all furred up inside, what do I do", "kettle.md", "Descaling"),
    ("how much water can go in the jug at most", "kettle.md", "Filling the kettle"),
    ("bread comes out too pale, how do I get it darker", "toaster.md", "Browning control"),
    ("where do the bits of burnt bread collect", "toaster.md", "Crumb tray"),
    ("can I rinse the grinding parts under the tap", "guide.rst", "Cleaning"),
    ("how many years of cover do I get on the toaster", "toaster.md", "Warranty"),
    ("what size of grounds for a cafetière", "guide.rst", "Grinding"),
    ("the lamp on the kettle lights up, why", "kettle.md", "Boiling"),
]


@pytest.fixture(scope="module")
def measured(model_server: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from runner.llm import build_client

    folder = tmp_path_factory.mktemp("rewrite")
    corpus = Corpus("manuals", CORPUS, max_words=60, outside=True)  # kept in tests/retrieval
    pipeline = Pipeline(
        path=folder / "p.yaml",
        domain="appliances",
        tools=(),
        corpora={"manuals": corpus},
        state_dir=folder,
        llm=model_llm(model_server),
    )
    index = open_corpus(pipeline, "manuals")
    client = build_client(pipeline.llm, pipeline=pipeline)
    prompts = Prompts(client, pipeline)
    rows = []
    for question, document, heading in QUESTIONS:
        restated = asyncio.run(prompts.rewrite(question, corpus="manuals", tool="rag"))
        searched = f"{question} {restated}" if restated else question
        rows.append(
            {
                "question": question,
                "restated": restated,
                "as_asked": found(index.search(question, 5), document, heading),
                "rewritten": found(index.search(searched, 5), document, heading),
            }
        )
    calls = [(call.purpose, call.outcome) for call in client.calls]
    report = Path(__file__).resolve().parents[2] / ".runner" / "test-llm-rewrite.txt"
    report.parent.mkdir(exist_ok=True)
    lines = [
        f"{r['as_asked']:d} -> {r['rewritten']:d}  {r['question']!r} => {r['restated']!r}"
        for r in rows
    ]
    summary = (
        f"gold in the top 5 as asked: {sum(r['as_asked'] for r in rows)}/{len(rows)}; "
        f"with the restatement: {sum(r['rewritten'] for r in rows)}/{len(rows)}"
    )
    report.write_text("\n".join([summary, *lines]) + "\n", encoding="utf-8")
    return {"rows": rows, "calls": calls}


def found(hits: list[Any], document: str, heading: str) -> bool:
    return any((h.page.document, h.page.heading) == (document, heading) for h in hits)


def test_every_question_gets_a_one_line_restatement(measured: dict[str, Any]) -> None:
    restated = [row["restated"] for row in measured["rows"]]
    assert all(text and "\n" not in text for text in restated), restated


def test_a_question_is_one_successful_rewrite_call(measured: dict[str, Any]) -> None:
    assert measured["calls"] == [("rewrite", "ok")] * len(QUESTIONS)
