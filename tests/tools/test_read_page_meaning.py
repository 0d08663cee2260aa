"""A deep search's pages go to `read_page` with their meaning when the corpus has page vectors
(runner.tools.meaning.page_meaning, runner.retrieval.reading.read_pages): the model, its
precision and the page's cosine with the question, so that the reader passes over a page that
shares the question's words and means something else (docs/offline.md, `read_page`)."""

from __future__ import annotations

import asyncio
from typing import Any

from runner.retrieval.pages import Page
from runner.retrieval.reading import read_pages
from runner.tools.meaning import page_meaning

PAGE = Page("moving.md#5", "moving.md", 5, "Moving House", "Tumble dryers", "Clean the filter.")


class _Vectors:
    model = "all-MiniLM-L6-v2"
    precision = "int8"


class _Index:
    def __init__(self, vectors: Any) -> None:
        self.vectors = vectors

    def cosine(self, query: str, node_id: str) -> float | None:
        return 0.19 if node_id == PAGE.node_id else None


class _Prompts:
    """Records the page passages it is asked to read; no page answers."""

    def __init__(self) -> None:
        self.pages: list[Any] = []

    async def read_page(self, question: str, page: Any, **_: Any) -> str | None:
        self.pages.append(page)
        return None


def test_a_page_of_a_corpus_with_page_vectors_carries_its_cosine_with_the_question() -> None:
    meaning = page_meaning(_Index(_Vectors()), "clean filter dishwasher")  # type: ignore[arg-type]
    assert meaning(PAGE) == {
        "model": "all-MiniLM-L6-v2",
        "precision": "int8",
        "first": None,
        "cosine": 0.19,
    }


def test_a_page_of_a_corpus_without_page_vectors_carries_no_meaning() -> None:
    assert page_meaning(_Index(None), "clean filter dishwasher")(PAGE) is None  # type: ignore[arg-type]


def test_read_pages_hands_each_page_to_read_page_with_its_meaning() -> None:
    prompts = _Prompts()
    meaning = page_meaning(_Index(_Vectors()), "clean filter dishwasher")  # type: ignore[arg-type]
    asyncio.run(read_pages(prompts, "q", [PAGE], tool="search", meaning=meaning))  # type: ignore[arg-type]
    [passage] = prompts.pages
    assert passage.meaning["cosine"] == 0.19
