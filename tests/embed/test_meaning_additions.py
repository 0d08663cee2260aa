"""What reading by meaning may add to the units the words chose (docs/offline.md, "Reading by
meaning"): nothing when the question is answered already — by a tool's answer the round quotes
(guaranteed, C23), or with the value each part asks for. The real model, as `make test-embed`
runs it."""

from __future__ import annotations

import pytest

from runner.llm.prompts import Passage
from runner.sources import Source
from tests.embed.test_reading_by_meaning import page
from tests.llm.helpers import offline, run

pytestmark = pytest.mark.usefixtures("embedder")  # the real model, or skipped

# bears on warranties, and does not say which warranty a washing machine gets; on the page
# search by meaning ranked first
CLAIMS = (
    "Warranty claims: A claim under the warranty needs the proof of purchase and the serial number."
)
# what a visit on a Saturday adds, on the page search by meaning ranked first
SATURDAY = "Visits: An engineer's visit on a Saturday adds a surcharge to the call-out."


def answer(question: str, *context: Passage, guaranteed: tuple[Passage, ...] = ()) -> str:
    _, prompts = offline()
    return run(prompts.answer(question, list(guaranteed), list(context))).text


def test_meaning_adds_nothing_to_a_tool_answer_that_answers_every_part() -> None:
    looked_up = Passage(
        "The KW-720X washing machine comes with a 3-year warranty.", (Source("products.csv"),)
    )
    reply = answer(
        "What warranty do I get on my washing machine?",
        page(CLAIMS, "server.md", 4, meant=True),
        guaranteed=(looked_up,),
    )
    assert reply == "The KW-720X washing machine comes with a 3-year warranty. [products.csv]"


def test_meaning_adds_nothing_when_the_words_quoted_the_value_each_part_asks() -> None:
    fees = page("Fees: The call-out fee is €89 on weekdays.", "fees.md", 2, meant=True)
    reply = answer("What is the call-out fee?", fees, page(SATURDAY, "server.md", 4, meant=True))
    assert reply == "The call-out fee is €89 on weekdays. [fees.md p. 2]"


def test_meaning_still_reads_when_the_words_quoted_no_value_for_a_part_asking_one() -> None:
    booking = page(
        "Booking: The call-out fee is shown when you book a visit online.", "b.md", 2, meant=True
    )
    charges = page(
        "Visit charges: An engineer's visit to your home costs €89.", "server.md", 4, meant=True
    )
    assert answer("What is the call-out fee?", booking, charges) == (
        "The call-out fee is shown when you book a visit online. [b.md p. 2]\n"
        "An engineer's visit to your home costs €89. [server.md p. 4]"
    )


def test_a_bare_number_does_not_answer_a_how_many_question() -> None:
    # "release 2" is a number: what the question asks for is not said
    queues = page(
        "Queues: A queue created in release 2 holds items in the order they came.",
        "a.md",
        2,
        meant=True,
    )
    size = page(
        "Capacity: The maxsize argument sets the upper bound on what a queue can store.",
        "server.md",
        4,
        meant=True,
    )
    assert answer("How many items can a queue hold?", queues, size) == (
        "A queue created in release 2 holds items in the order they came. [a.md p. 2]\n"
        "The maxsize argument sets the upper bound on what a queue can store. [server.md p. 4]"
    )


def test_pages_a_search_found_do_not_answer_as_a_tool_answer_does() -> None:
    # a deep search's supplement is guaranteed too (C28), and quotes pages: a words' match
    supplement = Passage(
        "The warranty on a washing machine is set out in the policy. [manual.md p. 3]",
        (Source("manual.md", 3),),
    )
    reply = answer(
        "What warranty do I get on my washing machine?",
        page(CLAIMS, "server.md", 4, meant=True),
        guaranteed=(supplement,),
    )
    assert reply == (
        "The warranty on a washing machine is set out in the policy. [manual.md p. 3]\n"
        "A claim under the warranty needs the proof of purchase and the serial number. "
        "[server.md p. 4]"
    )
