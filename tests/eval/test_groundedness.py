"""Groundedness: the share of an answer's sentences that the pages they cite support."""

from __future__ import annotations

from runner.eval.groundedness import grounding

PAGES = {
    ("leave.md", 3): "Employees may carry over up to five days of annual leave into the next year.",
    ("pay.md", 1): "Overtime on Sundays is paid at double time.",
}


def text_of(document: str, page: int) -> str | None:
    return PAGES.get((document, page))


def test_a_sentence_whose_words_the_cited_page_holds_is_supported() -> None:
    got = grounding("You may carry over five days into the next year. [leave.md p. 3]", text_of)
    assert (got.supported, got.sentences) == (1, 1)


def test_a_sentence_the_cited_page_does_not_hold_is_not_supported() -> None:
    got = grounding("Sundays are paid at double time. [leave.md p. 3]", text_of)
    assert (got.supported, got.sentences) == (0, 1)


def test_a_citation_covers_every_sentence_since_the_previous_one() -> None:
    answer = (
        "Carry over five days of annual leave. Into the next year. [leave.md p. 3] "
        "Sundays are paid at double time. [pay.md p. 1]"
    )
    got = grounding(answer, text_of)
    assert (got.supported, got.sentences) == (3, 3)


def test_sentences_after_the_last_citation_cite_nothing_and_are_unsupported() -> None:
    got = grounding("Carry over five days. [leave.md p. 3] Ask HR about anything else.", text_of)
    assert (got.supported, got.sentences, got.share) == (1, 2, 0.5)


def test_sentences_citing_only_table_rows_are_not_counted() -> None:
    got = grounding("Your balance is nine days. [employees.csv]", text_of)
    assert (got.sentences, got.share) == (0, None)
