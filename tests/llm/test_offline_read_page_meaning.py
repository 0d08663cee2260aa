"""A page a deep search reads (`read_page`) over a corpus with page vectors carries its page
vector's cosine with the question (runner.tools.meaning.page_meaning): a page that means nothing
of the question does not answer it, whatever words it shares (docs/offline.md, `read_page`)."""

from __future__ import annotations

from dataclasses import replace

from runner.llm.prompts import Passage
from runner.llm.providers.offline_meaning import PAGE_FLOOR
from runner.sources import Source

from .helpers import offline, run

QUESTION = "clean filter dishwasher"
# shares every word of the question, and is about another appliance
DRYER = Passage(
    "[moving.md, page 5] Moving House › Tumble dryers\n"
    "Clean the lint filter of the dryer; a dishwasher is moved differently.",
    (Source("moving.md", 5),),
)


def read(page: Passage) -> str | None:
    _, prompts = offline()
    return run(prompts.read_page(QUESTION, page, tool="search"))


def test_read_page_passes_over_a_page_whose_meaning_is_far_from_the_question() -> None:
    assert read(DRYER) is not None  # on its words alone it answers
    assert read(replace(DRYER, meaning={"cosine": PAGE_FLOOR - 0.2})) is None


def test_read_page_keeps_a_page_whose_meaning_is_near_the_question() -> None:
    assert read(replace(DRYER, meaning={"cosine": PAGE_FLOOR + 0.1})) is not None
