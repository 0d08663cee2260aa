"""How the offline provider reads a page (docs/offline.md, "How a passage is read"): what a unit
holds besides its own words. One behaviour per test, on texts written here."""

from __future__ import annotations

from runner.llm.prompts import Passage
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
