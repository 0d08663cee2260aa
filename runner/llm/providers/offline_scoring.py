"""Scoring for the offline answerer: each unit of the passages (`runner.llm.units.reading`)
against the question, by its words (docs/offline.md, "Writing answers": the score). What meaning
adds is `offline_meaning`; what is chosen from the scores, `extractive`.

- each content word of the question weighs its BM25 inverse document frequency over the units
  (a word no unit holds weighs most: it is what is missing); framing words ("difference",
  "mean", "way") weigh half;
- a unit matches a word it holds (1) and a word its section heading holds (+0.5);
- the sum is length-normalised as BM25 does (k1 = 1.2, b = 0.5), then scaled by how much of the
  question the unit's page holds (from 0.5 to 1) and by 0.7 for each place its page stands
  behind its search's first (the search saw more than these words), and raised for the first
  unit of a section (+25 %), for the question's word pairs in the question's order (up to +50 %)
  and for a cue the unit meets (+50 %: a number for "how many", a date for "when", a modal or a
  negation for "can I", a reason for "why": `runner.text.questions`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from runner.llm.providers.offline_passages import OfflinePassage
from runner.llm.units.reading import ROW, Unit, parse, word_pairs
from runner.llm.units.rows import code_columns, is_code
from runner.text.questions import FRAMING_STEMS, Part, unit_cues
from runner.text.words import tokenize

# a bracketed reference after a line (`[toc p. 23]`, `[12]`): not part of what the line says
_TRAILING_REFERENCE = re.compile(r"(?:\s*\[[^\[\]]*\])+\s*$")
CONTEXT_WEIGHT = 0.5  # a word only the unit's heading or column headers hold
FRAMING_WEIGHT = 0.5  # "difference", "mean", "way": they frame the question, not its topic
CUE_BONUS = 0.5  # a unit meeting the cue of a part it matches scores this much more
LEAD_BONUS = 0.25  # the first unit of a section scores this much more
PHRASE_BONUS = 0.5  # times the share of the question's word pairs the unit (or heading) has
PAGE_FLOOR = 0.5  # a unit's score is scaled from this (its page holds no other question word)
# a unit's score is scaled by this for each place its page stands behind its search's first
RANK_DECAY = 0.7
# up to 1 (its page holds every question word)
BM25_K1, BM25_B = 1.2, 0.5


@dataclass
class Candidate:
    """A unit the offline answerer may quote, with what it matches of the question."""

    passage: int
    unit: Unit
    match: dict[
        str, float
    ]  # question stem -> 1 if the unit holds it, + CONTEXT_WEIGHT for its heading
    norm: float = 1.0  # BM25 length normalisation, times the page factor and the lead bonus
    cue: float = 1.0
    score: float = 0.0

    @property
    def place(self) -> tuple[int, int]:
        return (self.passage, self.unit.position)

    @property
    def page(self) -> tuple[int, tuple[str, ...]]:
        return (self.passage, self.unit.labels)

    @property
    def section(self) -> tuple[int, tuple[str, ...], str]:
        return (self.passage, self.unit.labels, self.unit.section)


def unit_candidates(
    question_parts: Sequence[Part], passages: Sequence[OfflinePassage], exclude: str
) -> list[Candidate]:
    wanted = frozenset().union(*(part.stems for part in question_parts))
    codes = {word for part in question_parts for word in part.words if is_code(word)}
    excluded = f" {normal_text(exclude)} " if exclude else ""
    found: list[Candidate] = []
    for index, passage in enumerate(passages):
        for unit in parse(passage.text):
            if excluded and f" {normal_text(_TRAILING_REFERENCE.sub('', unit.text))} " in excluded:
                continue  # the question itself, as an FAQ or a table of contents repeats it
            if codes and _other_codes_row(unit, codes):
                continue  # another model's specification: the fridges' row for a washer
            match = dict.fromkeys(unit.stems & wanted, 1.0)
            for key in unit.context_stems & wanted:  # the heading adds to what the unit holds
                match[key] = match.get(key, 0.0) + CONTEXT_WEIGHT
            found.append(Candidate(index, unit, match))
    score_candidates(found, question_parts, passages)
    return found


def _other_codes_row(unit: Unit, codes: set[str]) -> bool:
    """A row of a table whose columns are codes (two or more: a specification table's models),
    none of them one the question names."""
    columns = code_columns(unit.fields) if unit.kind == ROW else []
    return len(columns) >= 2 and not codes.intersection(columns)


def score_candidates(
    candidates: list[Candidate], question_parts: Sequence[Part], passages: Sequence[OfflinePassage]
) -> None:
    """BM25-like: idf over the candidates, length-normalised, times the bonuses (cue, lead),
    the page factor (how much of the question the unit's page holds) and the search's rank of
    the unit's page (RANK_DECAY a place)."""
    if not candidates:
        return
    weights = idf_weights(candidates, question_parts)
    average = sum(c.unit.words for c in candidates) / len(candidates) or 1.0
    pages = _page_shares(candidates, weights)
    question_pairs = frozenset().union(*(word_pairs(part.text) for part in question_parts))
    for candidate in candidates:
        length = candidate.unit.words / average
        norm = (BM25_K1 + 1) / (1 + BM25_K1 * (1 - BM25_B + BM25_B * length))
        page = PAGE_FLOOR + (1 - PAGE_FLOOR) * pages[candidate.page]
        lead = 1 + LEAD_BONUS if candidate.unit.lead else 1.0
        phrase = 1 + PHRASE_BONUS * _phrase_share(candidate.unit, question_pairs)
        rank = RANK_DECAY ** passages[candidate.passage].search_rank
        candidate.norm = norm * page * lead * phrase * rank
        candidate.cue = _cue_factor(candidate, question_parts)
        candidate.score = gain(candidate, weights, set())


def _phrase_share(unit: Unit, question_pairs: frozenset[tuple[str, str]]) -> float:
    return len(unit.pairs & question_pairs) / len(question_pairs) if question_pairs else 0.0


def _page_shares(
    candidates: Sequence[Candidate], weights: Mapping[str, float]
) -> dict[tuple[int, tuple[str, ...]], float]:
    """For each page (a passage, or a labelled page inside one), the share of the question's
    weight its units and headings hold."""
    total = sum(weights.values()) or 1.0
    held = page_words(candidates)
    return {page: sum(weights[key] for key in keys) / total for page, keys in held.items()}


def idf_weights(
    candidates: Sequence[Candidate], question_parts: Sequence[Part]
) -> dict[str, float]:
    total = len(candidates)
    holding = dict.fromkeys(frozenset().union(*(part.stems for part in question_parts)), 0)
    for candidate in candidates:
        for key in candidate.match:
            holding[key] += 1
    return {key: _weight(key, n, total) for key, n in holding.items()}


def _weight(key: str, holding: int, total: int) -> float:
    """BM25's idf; a framing word weighs half, and nothing when no unit holds it: "what is the
    difference" is answered by a table that never says "difference"."""
    if key in FRAMING_STEMS:
        return 0.0 if holding == 0 else FRAMING_WEIGHT * _idf_of(holding, total)
    return _idf_of(holding, total)


def _idf_of(holding: int, total: int) -> float:
    return math.log(1 + (total - holding + 0.5) / (holding + 0.5))


def _cue_factor(candidate: Candidate, question_parts: Sequence[Part]) -> float:
    if not candidate.match:
        return 1.0
    met = unit_cues(candidate.unit.text)
    for part in question_parts:
        if part.cues & met and part.stems & candidate.match.keys():
            return 1 + CUE_BONUS
    return 1.0


def gain(candidate: Candidate, weights: Mapping[str, float], covered: set[str]) -> float:
    """The weight of the question words the candidate matches that are not covered yet."""
    added = sum(
        weights[key] * strength for key, strength in candidate.match.items() if key not in covered
    )
    return added * candidate.norm * candidate.cue


def page_words(candidates: Sequence[Candidate]) -> dict[tuple[int, tuple[str, ...]], set[str]]:
    """The question stems each page holds (a passage, or a labelled page inside one)."""
    held: dict[tuple[int, tuple[str, ...]], set[str]] = {}
    for candidate in candidates:
        held.setdefault(candidate.page, set()).update(candidate.match)
    return held


def normal_text(text: str) -> str:
    return " ".join(tokenize(text))
