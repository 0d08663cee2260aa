"""The offline answerer's scores by words (runner/llm/providers/offline_scoring.py), one rule a
test: what docs/offline.md promises of them."""

from __future__ import annotations

import pytest

from runner.llm.providers.offline_passages import OfflinePassage
from runner.llm.providers.offline_scoring import unit_candidates
from runner.text.questions import parts

# two sentences of one section, the same length and the same question words
SECTION = (
    "# Descaling\n\n"
    "Descale the kettle with citric acid every month.\n"
    "Descale the kettle with white vinegar every week."
)


def scores(question: str) -> dict[str, float]:
    found = unit_candidates(parts(question), [OfflinePassage(SECTION)], "")
    return {candidate.unit.text: candidate.score for candidate in found}


def test_the_first_unit_of_a_section_scores_a_quarter_more_than_its_equal_after_it() -> None:
    found = scores("how do I descale the kettle")
    first = found["Descale the kettle with citric acid every month."]
    later = found["Descale the kettle with white vinegar every week."]
    assert first == pytest.approx(later * 1.25)  # offline.md: the first unit of a section, +25 %
