"""The offline provider on a corpus nobody tuned it for: the Python FAQ (reStructuredText), cut
into pages the way `runner index` cuts them. Skipped when the pydocs data is not there."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from runner.llm.prompts import Passage
from runner.retrieval.pages import Document, Page, paginate
from runner.retrieval.reading import page_passage, pages_context

from .helpers import offline, run

REPO = Path(__file__).resolve().parents[2]
CANDIDATES = (Path("/work/shared/data/pydocs"), REPO.parent / "shared" / "data" / "pydocs")
PYDOCS = next((path for path in CANDIDATES if (path / "docs" / "faq").is_dir()), None)

pytestmark = pytest.mark.skipif(PYDOCS is None, reason="the pydocs sample is not available")

# what a quoted answer must never contain: reStructuredText markup, code, headings
ARTEFACTS = re.compile(r"::|>>>|:\w+:`|``|^[-=~]{3,}|\n[-=~]{3,}")
ONE_CITATION = re.compile(r" \[faq/\w+\.rst\.txt p\. \d+\]$")


def faq_pages(name: str) -> list[Page]:
    assert PYDOCS is not None
    text = (PYDOCS / "docs" / "faq" / f"{name}.rst.txt").read_text(encoding="utf-8")
    return paginate(Document(f"faq/{name}.rst.txt", text), max_words=200)


def page_titled(pages: list[Page], heading: str) -> Page:
    return next(page for page in pages if page.heading == heading)


@pytest.fixture(scope="module")
def design() -> list[Page]:
    return faq_pages("design")


@pytest.fixture(scope="module")
def retrieved(design: list[Page]) -> tuple[Page, Passage]:
    """What a retrieval tool would hand over for the strings question: the answering page
    among three that share its words, in one labelled passage."""
    headings = (
        "Why are there separate tuple and list data types?",
        "Why are Python strings immutable?",
        "How fast are exceptions?",
        "Why is there no goto?",
    )
    pages = [page_titled(design, heading) for heading in headings]
    return pages[1], Passage(pages_context(pages), tuple(page.source for page in pages))


def test_the_answer_quotes_the_answering_section_cited_by_its_page(
    retrieved: tuple[Page, Passage],
) -> None:
    answering, passage = retrieved
    _, prompts = offline()
    reply = run(prompts.answer("Why are Python strings immutable?", [], [passage])).text
    first = reply.splitlines()[0]
    assert "a string is immutable" in first
    assert first.endswith(f"[faq/design.rst.txt p. {answering.page}]")
    assert all(ONE_CITATION.search(line) for line in reply.splitlines())
    assert not ARTEFACTS.search(reply)


def test_a_question_with_a_degree_word_finds_its_section(retrieved: tuple[Page, Passage]) -> None:
    _, passage = retrieved
    _, prompts = offline()
    reply = run(prompts.answer("How fast are exceptions?", [], [passage])).text
    assert reply.startswith("A try/except block is extremely efficient if no exceptions")


def test_the_gatekeeper_accepts_pages_that_answer_and_rejects_pages_that_do_not(
    retrieved: tuple[Page, Passage],
) -> None:
    _, passage = retrieved
    _, prompts = offline()
    assert run(prompts.gatekeeper("Why are Python strings immutable?", [passage]))[0] is True
    assert run(prompts.gatekeeper("How do I delete a file in Python?", [passage]))[0] is False


def test_read_page_finds_the_answer_on_its_page_only(retrieved: tuple[Page, Passage]) -> None:
    answering, _ = retrieved
    _, prompts = offline()
    question = "Why are strings immutable?"
    found = run(prompts.read_page(question, page_passage(answering), tool="search"))
    assert found is not None and "immutable" in found and not ARTEFACTS.search(found)
    other = page_titled(faq_pages("design"), "How fast are exceptions?")
    assert run(prompts.read_page(question, page_passage(other), tool="search")) is None
