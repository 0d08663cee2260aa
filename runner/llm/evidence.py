"""A gatekeeper's second reading: what the retrieval's own evidence says about its pages
(runner.tools.evidence gives it when the corpus has page vectors). The offline provider's
gatekeeper and the engine's `mode: rule` weigh it alike.

Words alone cannot tell a page that answers a question in other words from one that does not:
on questions in users' words the word rules find the context enough for fewer than half of the
questions whose answer was among the pages. The question's cosine with the first page the search
returned (of its own ranking: keyword, vector or hybrid), and how far the keyword and vector
rankings agree, tell them apart better; the word rules' verdict
still counts, so that a question worded like the docs keeps its verdict.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

# The weights and the bar were chosen on one question set (pydocs-users, keyword pipeline) and
# measured on the others (bench/gatekeeper.py; bench/README.md has the figures).
AGREEMENT_WEIGHT = 0.1  # for each of the keyword ranking's pages among the vectors' best
WORDS_WEIGHT = 0.1  # when the word rules find the context enough
# The same bar for a hybrid ranking's evidence: measured on bench.answers' hybrid pipelines it
# finds "enough" for 0.76-0.86 of the questions whose gold page was found and "not enough" for
# 0.39-0.48 of those whose gold was not; 0.57 would balance the two on pydocs-users (0.61 / 0.61)
# but sends questions the first pages do answer, worded across two topics, to the deep search.
CONFIDENCE_NEEDED = 0.5


@dataclass(frozen=True)
class Evidence:
    """What page vectors say of a search's pages, for the gatekeeper."""

    first_page_cosine: float  # of the first page the search returned
    agreement: int  # the keyword ranking's top k pages among the vectors' top k
    top_k: int
    ranking: str = "keyword"  # the search's own: keyword, vector or hybrid

    def confidence(self, enough_by_words: bool) -> float:
        return (
            self.first_page_cosine
            + AGREEMENT_WEIGHT * self.agreement
            + WORDS_WEIGHT * enough_by_words
        )

    def reason(self, enough_by_words: bool) -> str:
        words = "; the word rules find it enough" if enough_by_words else ""
        return (
            f"retrieval evidence: the question's cosine with the first {self.ranking} page "
            f"{self.first_page_cosine:.2f}, {self.agreement} of the {self.top_k} keyword pages "
            f"among the vectors' best {self.top_k}{words}: confidence "
            f"{self.confidence(enough_by_words):.2f} (needs {CONFIDENCE_NEEDED:.2f})"
        )


def evidence_of(passages: Iterable[Any]) -> Evidence | None:
    """The first retrieval evidence among the passages (the facts' mappings), if any is
    well-formed; a passage without one, or with a malformed one, is passed over."""
    for passage in passages or ():
        found = passage.get("evidence") if isinstance(passage, Mapping) else None
        if not isinstance(found, Mapping):
            continue
        try:
            return Evidence(
                float(found["first_page_cosine"]),
                int(found["agreement"]),
                int(found["top_k"]),
                str(found.get("ranking") or "keyword"),
            )
        except (KeyError, TypeError, ValueError):
            continue
    return None


def weighed(evidence: Evidence, enough_by_words: bool) -> bool:
    """Enough when the cosine, the agreement and the words' verdict together reach the bar."""
    return evidence.confidence(enough_by_words) >= CONFIDENCE_NEEDED
