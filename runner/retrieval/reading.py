"""Pages as context, and pages read by the LLM (purpose `read_page`): what the search and
neighbour-search tools share.

Reading is concurrent (`asyncio.gather`); the LLM client's concurrency limit (`llm.concurrency`)
is what bounds how many calls are in flight at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from runner.llm.citations import page_label
from runner.retrieval.pages import Page

if TYPE_CHECKING:
    from runner.config.model import TemplateRef
    from runner.llm.prompts import Passage, Prompts


@dataclass(frozen=True)
class PageAnswer:
    """A page and the answer read from it."""

    page: Page
    answer: str


def label(page: Page) -> str:
    """How a page is cited in context text: `[document, page N]` (no ". " inside, so that a
    sentence splitter never cuts a citation in two)."""
    return page_label(page.document, page.page)


def pages_context(pages: Sequence[Page]) -> str:
    """Pages as one context text, each under its citation and its place in the document: the
    document's title and the section's heading (`Spare Parts Policy › Availability periods`),
    so that a page deep in a document still says what it is about."""
    blocks = []
    for page in pages:
        place = page_place(page)
        blocks.append(f"{label(page)}{' ' + place if place else ''}\n{page.text}")
    return "\n\n".join(blocks)


def page_place(page: Page) -> str:
    """`title › heading`, or the one of them there is (once when they are the same)."""
    parts = [part for part in (page.title, page.heading) if part]
    return " › ".join(dict.fromkeys(parts))


def answers_context(answers: Sequence[PageAnswer]) -> str:
    """The pages' answers, each cited, in page order."""
    return "\n\n".join(f"{label(found.page)} {found.answer}" for found in answers)


def page_passage(page: Page, meaning: Mapping[str, Any] | None = None) -> Passage:
    """A page to read, under its label and its place (as in a context): a page deep in a
    document says what it is about only in its document's title and its section's heading
    ("Spare Parts Availability Policy › Availability periods" for a table of years). With
    `meaning`, how it can be read by meaning (runner.tools.meaning.page_meaning)."""
    from runner.llm.prompts import Passage

    return Passage(
        text=pages_context([page]), sources=(page.source,), key=page.node_id, meaning=meaning
    )


# how a page can be read by meaning (runner.tools.meaning.page_meaning), None when it cannot
PageMeaning = Callable[[Page], Mapping[str, Any] | None]


async def read_pages(
    prompts: Prompts,
    question: str,
    pages: Iterable[Page],
    *,
    tool: str,
    template: TemplateRef | None = None,
    meaning: PageMeaning | None = None,
) -> list[PageAnswer]:
    """Ask the LLM whether each page answers the question; the pages that do, in page order.
    With `meaning` (a corpus with page vectors), each page goes with its meaning, worked out
    in a worker thread (embedding the question takes the model's CPU time)."""
    chosen = list(pages)
    meanings: list[Mapping[str, Any] | None] = [None] * len(chosen)
    if meaning is not None and chosen:
        meanings = await asyncio.to_thread(lambda: [meaning(page) for page in chosen])
    replies = await asyncio.gather(
        *(
            prompts.read_page(question, page_passage(page, meant), tool=tool, template=template)
            for page, meant in zip(chosen, meanings, strict=True)
        )
    )
    return [PageAnswer(page, reply) for page, reply in zip(chosen, replies, strict=True) if reply]


def unique_pages(pages: Iterable[Page]) -> list[Page]:
    return list({page.node_id: page for page in pages}.values())
