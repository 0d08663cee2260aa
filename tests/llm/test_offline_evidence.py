"""The offline gatekeeper weighs a retrieval's evidence when the passages carry it (C27;
docs/offline.md, `gatekeeper`): the question's cosine with the first keyword page, 0.1 for each
keyword page among the vectors' best, 0.1 when the word rules find the context enough; enough
from 0.5. Without evidence the words decide, as before."""

from __future__ import annotations

from dataclasses import replace

from runner.engine.results import PromptAndContext
from runner.llm.prompts import Passage, passages_from_buffer
from runner.sources import Source

from .helpers import offline, run

MANUAL = Passage(
    "# Battery\nThe XR-200 battery lasts 10 hours. It charges fully in 2 hours.\nThe case is blue.",
    (Source("manual.md", 3),),
    key="1:manual_rag",
)
COVERED = "How many hours does the XR-200 battery last?"  # the words find MANUAL enough
OTHER_WORDS = "how long can I go unplugged with my XR-200?"  # they do not


def gate(question: str, passage: Passage) -> tuple[bool, str]:
    _, prompts = offline()
    return run(prompts.gatekeeper(question, [passage]))


def with_evidence(cosine: float, agreement: int) -> Passage:
    return replace(
        MANUAL, evidence={"first_page_cosine": cosine, "agreement": agreement, "top_k": 5}
    )


def test_c27_strong_evidence_finds_enough_what_the_words_do_not() -> None:
    assert gate(OTHER_WORDS, MANUAL)[0] is False
    enough, reason = gate(OTHER_WORDS, with_evidence(0.42, 1))
    assert enough is True
    assert reason.endswith(
        "retrieval evidence: the question's cosine with the first keyword page 0.42, 1 of the 5 "
        "keyword pages among the vectors' best 5: confidence 0.52 (needs 0.50)"
    )


def test_c27_weak_evidence_sends_on_a_context_the_words_find_enough() -> None:
    assert gate(COVERED, MANUAL)[0] is True
    enough, reason = gate(COVERED, with_evidence(0.25, 0))
    assert enough is False
    assert "the word rules find it enough: confidence 0.35 (needs 0.50)" in reason


def test_the_words_verdict_counts_toward_the_bar() -> None:
    assert gate(COVERED, with_evidence(0.40, 0))[0] is True  # 0.40 + 0.1 for the words
    assert gate(OTHER_WORDS, with_evidence(0.40, 0))[0] is False


def test_malformed_evidence_leaves_the_verdict_to_the_words() -> None:
    broken = replace(MANUAL, evidence={"first_page_cosine": "high", "agreement": 2, "top_k": 5})
    enough, reason = gate(COVERED, broken)
    assert enough is True
    assert "retrieval evidence" not in reason


def test_a_buffer_result_hands_its_retrieval_evidence_to_its_passage() -> None:
    evidence = {"first_page_cosine": 0.61, "agreement": 3, "top_k": 5}
    entry = PromptAndContext(
        "q", MANUAL.text, sources=MANUAL.sources, data={"pages": [], "evidence": evidence}
    )
    [passage] = passages_from_buffer({"1:manual_rag": [entry]})
    assert passage.evidence == evidence
    assert passage.to_json()["evidence"] == evidence


def test_a_passage_without_evidence_shows_templates_no_evidence_key() -> None:
    assert "evidence" not in MANUAL.to_json()


def test_c27_the_reason_names_the_ranking_the_evidence_is_of() -> None:
    hybrid = replace(
        MANUAL,
        evidence={"first_page_cosine": 0.73, "agreement": 1, "top_k": 5, "ranking": "hybrid"},
    )
    _, reason = gate(OTHER_WORDS, hybrid)
    assert (
        "the question's cosine with the first hybrid page 0.73, 1 of the 5 keyword pages among "
        "the vectors' best 5"
    ) in reason
