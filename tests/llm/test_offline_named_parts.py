"""The offline gatekeeper (C27) and `missing_info` (C28) judge a part of the question that names
something ("is the KW-620 quiet") answered only by one unit an answer would quote holding both
the name and what is asked of it: a page that mentions the name elsewhere — a table's header row
repeated on every page of it — does not answer the part (docs/offline.md, `gatekeeper`,
rule 5)."""

from __future__ import annotations

from runner.llm.prompts import Passage
from runner.sources import Source

from .helpers import offline, run

# the header names every model; the page says nothing of noise for any of them
SPECS_PAGE = Passage(
    "# Specifications\n"
    "| Specification | KW-620 | KW-720X |\n"
    "|---|---|---|\n"
    "| Standard warranty | 2 years | 3 years |\n"
    "| Connectivity | none | Wi-Fi |\n\n"
    "Quiet mode is available on every dryer.\n",
    (Source("specs.md", 4),),
)
TWO_PARTS = "Is the KW-620 quiet? And what is the warranty?"
NOISE_ROW = "| Noise, quiet programme | 48 dB | 46 dB |\n"


def gate(question: str, passage: Passage) -> tuple[bool, str]:
    _, prompts = offline()
    return run(prompts.gatekeeper(question, [passage]))


def with_noise_row(passage: Passage) -> Passage:
    text = passage.text.replace("| Connectivity", NOISE_ROW.rstrip("\n") + "\n| Connectivity")
    return Passage(text, passage.sources)


def test_c27_a_name_only_in_a_table_header_does_not_answer_the_part_asking_about_it() -> None:
    enough, reason = gate(TWO_PARTS, SPECS_PAGE)
    assert enough is False
    assert "says both a name and what is asked: Is the KW-620 quiet (kw-620)" in reason


def test_c27_a_row_naming_the_model_and_holding_what_is_asked_answers_the_part() -> None:
    enough, reason = gate(TWO_PARTS, with_noise_row(SPECS_PAGE))
    assert enough is True, reason


def test_c27_a_sentence_after_the_one_naming_the_model_answers_for_it() -> None:
    page = Passage(
        "# Battery\nThe XR-200 is our lightest vacuum. Its battery lasts 10 hours.",
        (Source("manual.md", 3),),
    )
    assert gate("How many hours does the XR-200 battery last?", page)[0] is True


def test_c28_missing_info_asks_for_the_part_whose_name_is_only_in_a_header() -> None:
    _, prompts = offline()
    queries = run(prompts.missing_info(TWO_PARTS, [SPECS_PAGE], max_missing=2))
    assert queries == ["kw-620 quiet"]


def test_c27_a_list_item_answers_for_the_name_its_list_is_introduced_with() -> None:
    page = Passage(
        "# Features\nThe KW-620 comes with two programmes for the night:\n"
        "- Silent wash, for a load overnight.\n- A quiet spin at 800 rpm.\n",
        (Source("manual.md", 5),),
    )
    assert gate("Is the KW-620 quiet?", page)[0] is True


def test_c27_a_name_without_a_digit_is_left_to_the_rule_for_names() -> None:
    # the model reads "Python"; the manual's title names it above every page for a reason
    page = Passage(
        "[tutorial.md, page 3] The Python Tutorial › Reading files\n"
        "Use open() to read a file, and read() to read its whole text.",
        (Source("tutorial.md", 3, "The Python Tutorial", "Reading files"),),
    )
    assert gate("How do I read a file in Python?", page)[0] is True
