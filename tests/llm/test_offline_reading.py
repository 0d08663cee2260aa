"""How the offline provider reads a page (docs/offline.md, "How a passage is read"): what a unit
holds besides its own words. One behaviour per test, on texts written here."""

from __future__ import annotations

import pytest

from runner.llm.prompts import Passage
from runner.llm.providers import offline_meaning
from runner.sources import Source

from .helpers import offline, run

PARTS_TABLE = """\
[policies/parts.md, page 2] Spare Parts Policy › Availability periods
## Availability periods

The period starts on the date the last unit of a model was produced.

| Category | Functional parts | Cosmetic parts |
|---|---|---|
| Fridge-freezers | 10 years | 7 years |
| Ovens and hobs | 12 years | 6 years |
| Microwaves | 7 years | 5 years |
"""


def answer(question: str, *context: Passage) -> str:
    _, prompts = offline()
    return run(prompts.answer(question, [], list(context))).text


def test_a_page_repeating_its_own_heading_keeps_its_documents_title_for_its_units() -> None:
    # "spare" is only in the document's title: the row still answers, with its header
    table = Passage(PARTS_TABLE, (Source("policies/parts.md", 2),))
    reply = answer("How many years are oven spare parts stocked?", table)
    assert reply.startswith("Ovens and hobs — Functional parts: 12 years; Cosmetic parts: 6 years.")


# --- reading by meaning: the rules, with the model's cosines given (tests/embed runs the model)


def meant(text: str, document: str, first: bool = False) -> Passage:
    place = {"document": "a.md", "page": 1} if first else {"document": "z.md", "page": 1}
    return Passage(text, (Source(document, 1),), "1:rag", meaning={"model": "m", "first": place})


def given_cosines(monkeypatch: pytest.MonkeyPatch, by_text: dict[str, float]) -> None:
    def cosines(_model: object, _question: str, texts: list[str]) -> list[float]:
        return [next((v for k, v in by_text.items() if k in text), 0.0) for text in texts]

    monkeypatch.setattr(offline_meaning, "cosines", cosines)


def test_a_sentence_the_words_chose_that_means_nothing_of_the_question_is_left_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    right = "Stop the server with the stop command of apachectl."
    wrong = "The web of cables by the stop sign is red."  # the words would quote it for "web"
    given_cosines(monkeypatch, {right: 0.6, wrong: 0.1})
    reply = answer("How do I stop the web server?", meant(right, "a.md"), meant(wrong, "b.md"))
    assert reply == f"{right} [a.md p. 1]"


def test_a_sentence_holding_a_code_the_question_names_is_kept_whatever_its_cosine(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the model reads "E24" as noise; the words know it is the code the customer sees
    code = "E24 means a software update was interrupted: leave the dishwasher on."
    other = "Standing water at the bottom of the tub after a wash is normal."
    given_cosines(monkeypatch, {code: 0.05, other: 0.6})
    reply = answer(
        "My dishwasher shows E24 and the water stays at the bottom",
        meant(code, "a.md"),
        meant(other, "b.md"),
    )
    assert code in reply


def test_without_the_model_the_words_alone_decide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(offline_meaning, "cosines", lambda *_: None)  # the model cannot run here
    right = "Stop the server with the stop command of apachectl."
    reply = answer("How do I stop the server?", meant(right, "a.md"))
    assert reply == f"{right} [a.md p. 1]"


def test_the_first_page_by_meaning_is_quoted_though_the_words_chose_another(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    first = "Send every visitor to the encrypted address with a permanent redirect."
    worded = "HTTPS everywhere is a browser add-on for users."
    given_cosines(monkeypatch, {first: 0.5, worded: 0.35})
    reply = answer(
        "How do I force everyone onto HTTPS?",
        meant(first, "a.md", first=True),
        meant(worded, "b.md"),
    )
    assert reply.startswith(f"{first} [a.md p. 1]")


def test_each_page_that_means_the_question_gives_its_best_unit_and_the_others_none(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    first = "Send every visitor to the encrypted address with a permanent redirect."
    also = "A rewrite rule can move every plain request to the secure site."
    unrelated = "The log rotates at midnight."
    given_cosines(monkeypatch, {first: 0.5, also: 0.45, unrelated: 0.05})
    reply = answer(
        "How do I force everyone onto HTTPS?",
        meant(first, "a.md", first=True),
        meant(unrelated, "c.md"),
        meant(also, "b.md"),
    )
    assert reply == f"{first} [a.md p. 1]\n{also} [b.md p. 1]"


def test_every_page_search_returned_that_means_the_question_is_quoted_not_only_three(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the search ranks pages better than a sentence's cosine: its fifth page may be the answer
    texts = [
        "Send every visitor to the encrypted address with a permanent redirect.",
        "A rewrite rule can move every plain request to the secure site.",
        "The secure site needs a certificate for its name.",
        "Browsers remember a site that asks for encryption only.",
        "A virtual host on port 80 can point its visitors at port 443.",
    ]
    given_cosines(monkeypatch, dict(zip(texts, (0.5, 0.48, 0.46, 0.44, 0.42), strict=True)))
    pages = [meant(text, f"{n}.md", first=n == 0) for n, text in enumerate(texts)]
    reply = answer("How do I force everyone onto HTTPS?", *pages)
    assert all(f"[{n}.md p. 1]" in reply for n in range(5))


NEED = "A list can serve as a first-in first-out queue, but it is slow for this."
WHY = "Popping from its front moves every other item."
REMEDY = "Use a double-ended queue."


def reply_after_need(monkeypatch: pytest.MonkeyPatch, following: dict[str, float]) -> str:
    """The answer on a page whose best sentence names the need, the `following` sentences (and
    their cosines) after it."""
    given_cosines(monkeypatch, {NEED: 0.6, **following})
    page = meant(" ".join([NEED, *following]), "a.md")
    return answer("take items off the front in arrival order", page)


def test_a_unit_meaning_adds_brings_the_next_one_of_its_section_that_bears_too(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the first sentence names the need in the user's words; the next one meets it
    assert reply_after_need(monkeypatch, {REMEDY: 0.35}) == f"{NEED} {REMEDY} [a.md p. 1]"


def test_a_unit_meaning_adds_brings_two_units_after_it_that_bear(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reply = reply_after_need(monkeypatch, {WHY: 0.35, REMEDY: 0.35})
    assert reply == f"{NEED} {WHY} {REMEDY} [a.md p. 1]"


def test_no_more_than_two_units_after_it_are_brought(monkeypatch: pytest.MonkeyPatch) -> None:
    more = "A double-ended queue also pops from its end quickly."
    reply = reply_after_need(monkeypatch, {WHY: 0.35, REMEDY: 0.35, more: 0.35})
    assert reply == f"{NEED} {WHY} {REMEDY} [a.md p. 1]"


def test_reading_on_stops_at_a_unit_that_does_not_bear(monkeypatch: pytest.MonkeyPatch) -> None:
    aside = "Lists were added in the first release."
    assert reply_after_need(monkeypatch, {aside: 0.1, REMEDY: 0.35}) == f"{NEED} [a.md p. 1]"


def test_the_next_unit_that_does_not_bear_on_the_question_is_not_brought(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    aside = "Lists were added in the first release."
    assert reply_after_need(monkeypatch, {aside: 0.1}) == f"{NEED} [a.md p. 1]"


def test_a_unit_is_read_by_meaning_with_the_code_it_introduces(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the question's words are in the code alone: the sentence's meaning must hold it
    intro = "Enum types are created with the CREATE TYPE command, for example:"
    code = "CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');"
    other = "Enum labels are case sensitive."
    given_cosines(monkeypatch, {code: 0.6, other: 0.5})
    page = meant(f"{intro}\n\n```\n{code}\n```\n\n{other}", "a.md", first=True)
    reply = answer("a mood column limited to 'happy', 'sad' and 'ok'", page)
    assert reply.startswith(f"{intro} [a.md p. 1]\n```\n{code}\n```")


def test_a_page_s_footnote_reference_is_not_quoted_as_a_citation() -> None:
    # "[2]" on the page is its footnote; in the answer it would cite the second passage
    page = Passage(
        "Every user has permission to create databases.[2] Log in as that user.",
        (Source("createdb.md", 4),),
    )
    other = Passage("The log rotates at midnight.", (Source("logs.md", 1),))
    reply = answer("Who has permission to create databases?", page, other)
    assert reply.startswith("Every user has permission to create databases. Log in as")
    assert reply.endswith("[createdb.md p. 4]") and "logs.md" not in reply


def test_missing_info_reads_by_meaning_a_part_whose_words_are_on_a_page_that_means_else(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    battery = "The XR-200 battery lasts 10 hours on one charge."
    crate = "The shipping crate case holds the colour samples."  # the words of part two
    given_cosines(monkeypatch, {battery: 0.6, crate: 0.1})
    _, prompts = offline()
    missing = run(
        prompts.missing_info(
            "How long does the XR-200 battery last, and what colour is the case?",
            [meant(battery, "a.md", first=True), meant(crate, "b.md")],
            max_missing=3,
        )
    )
    assert missing == ["colour case"]


def test_what_an_answer_covers_is_what_it_quotes_not_what_meaning_left_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from runner.llm.providers.extractive import passages_from_facts, quoted_coverage
    from runner.text.words import stem

    battery = "The XR-200 battery lasts 10 hours on one charge."
    crate = "The shipping crate case holds the colour samples."
    given_cosines(monkeypatch, {battery: 0.6, crate: 0.1})
    pages = [meant(battery, "a.md", first=True), meant(crate, "b.md")]
    _, held, text = quoted_coverage(
        "How long does the XR-200 battery last, and what colour is the case?",
        passages_from_facts([page.to_json() for page in pages]),
        per_guaranteed=6,
        limit=4,
    )
    assert crate not in text
    assert stem("colour") not in held and stem("battery") in held


def test_a_page_of_the_topic_is_not_added_when_the_words_chose_what_means_the_question_most(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # on a manual of one appliance every unit of the topic passes the floor; the steps the
    # words found mean the question most, so the water-supply note (0.45 < 0.8 x 0.67) stays out
    steps = "Rinse the filter under running water to clean it."
    supply = "The dishwasher may be connected to cold or hot water."
    given_cosines(monkeypatch, {steps: 0.67, supply: 0.45})
    reply = answer(
        "How do I clean the filter?", meant(steps, "a.md", first=True), meant(supply, "b.md")
    )
    assert reply == f"{steps} [a.md p. 1]"


def test_a_page_meaning_the_question_nearly_as_much_is_still_added(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    steps = "Rinse the filter under running water to clean it."
    brush = "A soft brush takes the grease off the fine mesh."
    given_cosines(monkeypatch, {steps: 0.67, brush: 0.6})
    reply = answer(
        "How do I clean the filter?", meant(steps, "a.md", first=True), meant(brush, "b.md")
    )
    assert f"{brush} [b.md p. 1]" in reply
