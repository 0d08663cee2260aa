"""Where the pages carry their meaning, the offline gatekeeper reads a part that names something
("is the KW-620 quiet") by meaning, one unit at a time (C27; docs/offline.md, `gatekeeper`,
rule 5): a retrieval's evidence for the page cannot overrule a part no unit answers, since
neither a page's vector nor the rankings tell one model's code from another's. The real model,
as `make test-embed` runs it."""

from __future__ import annotations

from dataclasses import replace

import pytest

from runner.embedding import DEFAULT_MODEL
from runner.llm.prompts import Passage
from runner.sources import Source
from tests.llm.helpers import offline, run

TWO_PARTS = "Is the KW-620 quiet? And what is the warranty?"
STRONG = {"first_page_cosine": 0.6, "agreement": 2, "top_k": 4, "ranking": "hybrid"}


pytestmark = pytest.mark.usefixtures("embedder")  # the real model, or skipped


def specs_page(*rows: str) -> Passage:
    from runner.embedding.models import default_runtime

    precision = "int8" if default_runtime() == "onnx-int8" else "float32"
    header = "| Specification | KW-620 | KW-720X |\n|---|---|---|\n"
    return Passage(
        "[specs.md, page 22] Washer Manual (KW-620, KW-720X) › Technical specifications\n"
        + header
        + "\n".join(rows),
        (Source("specs.md", 22, "Washer Manual (KW-620, KW-720X)", "Technical specifications"),),
        "1:rag",
        meaning={"model": DEFAULT_MODEL, "precision": precision},
        evidence=STRONG,
    )


WARRANTY = "| Standard warranty | 2 years | 3 years |"
NOISE = "| Noise, spin | 76 dB | 72 dB |"


def gate(passage: Passage) -> tuple[bool, str]:
    _, prompts = offline()
    return run(prompts.gatekeeper(TWO_PARTS, [passage]))


def test_c27_strong_evidence_does_not_answer_a_named_part_no_unit_means() -> None:
    enough, reason = gate(specs_page(WARRANTY, "| Connectivity | none | Wi-Fi |"))
    assert enough is False
    assert "Is the KW-620 quiet (kw-620)" in reason


def test_c27_a_row_meaning_the_part_answers_it_in_other_words() -> None:
    # "quiet" is in no unit: the noise row answers it by meaning
    enough, reason = gate(specs_page(NOISE, WARRANTY))
    assert enough is True, reason


def test_c27_without_page_meaning_the_evidence_judges_what_a_named_unit_says() -> None:
    page = replace(specs_page(NOISE, WARRANTY), meaning=None)
    assert gate(page)[0] is True


def read_alone(passage: Passage, cosine: float) -> str | None:
    """A deep search's read of one page for the missing part, the page's own cosine given."""
    _, prompts = offline()
    meaning = {**(passage.meaning or {}), "first": None, "cosine": cosine}
    page = replace(passage, meaning=meaning, evidence=None)
    return run(prompts.read_page("kw-620 quiet", page, tool="neighbors"))


def test_c29_a_page_read_alone_answers_a_named_part_with_the_unit_that_means_it() -> None:
    # the page's vector hardly means "kw-620 quiet" (a code is noise to it): the row does
    answer = read_alone(specs_page(WARRANTY, NOISE), cosine=0.28)
    assert answer is not None and "Noise, spin" in answer and "76 dB" in answer
    assert "Standard warranty" not in answer


def test_c29_a_page_read_alone_with_no_unit_meaning_the_named_part_does_not_answer() -> None:
    assert read_alone(specs_page(WARRANTY, "| Connectivity | none | Wi-Fi |"), 0.28) is None


def piece(number: int, row: str) -> Passage:
    """A piece of the specifications table cut across pages 21 and 22."""
    page = specs_page(row)
    source = replace(page.sources[0], page=number)
    text = page.text.replace("page 22]", f"page {number}]")
    return replace(
        page,
        text=text,
        sources=(source,),
        meaning={**(page.meaning or {}), "first": None},
        evidence=None,
    )


def composed(*pages: Passage) -> str:
    """A deep search's answer from pages a search handed over unread (C31's plain context)."""
    _, prompts = offline()
    return run(prompts.compose(TWO_PARTS, list(pages), tool="deep_search")).text


def test_c31_unread_pages_carrying_meaning_are_composed_by_it() -> None:
    # "quiet" is in no unit: the words alone quote the warranty row and nothing for that part
    text = composed(piece(22, WARRANTY), piece(21, NOISE))
    assert "Noise, spin" in text and "76 dB" in text


def test_c31_unread_pages_without_meaning_are_composed_by_their_words() -> None:
    pages = [replace(page, meaning=None) for page in (piece(22, WARRANTY), piece(21, NOISE))]
    text = composed(*pages)
    assert "Standard warranty" in text and "Noise, spin" not in text
