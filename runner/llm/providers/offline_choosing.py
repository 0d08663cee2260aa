"""Which units the words choose (rules 1-6 of `extractive`'s docstring, docs/offline.md
"Writing answers"): for each part of the question the units that compete for what it still
needs, the greedy cover of its weight, then the units of the chosen sections, a section the
question heads read in order, and the steps and lead-ins a chosen unit brings. Scores come from
`offline_scoring`; what meaning adds or leaves out is `offline_meaning`'s and `extractive`'s."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet

from runner.llm.providers.offline_scoring import Candidate, gain, idf_weights, page_words
from runner.llm.units.reading import ITEM, ROW, SENTENCE
from runner.text.questions import Part, unit_values

_NUMBERED = re.compile(r"^\d{1,3}[.)]\s")
RELEVANCE_MIN = 0.4  # of the best score for a part: below it a unit does not compete
PAGE_MIN_SHARE = 0.5  # nor does a unit whose page holds less than this share of the part
SUPPORT_MIN = 0.6  # of the best score: a further unit of a chosen section
MIN_SHARE_OF_QUESTION = 1 / 3  # the chosen units must cover this share of the question's weight
ANSWER_WORDS = 120  # context units stop being added past this many words
TITLE_SHARE = 0.6  # a section whose heading holds this share of a part's weight is about it…
SECTION_WORDS = 160  # …and its units are quoted in order up to this many words in all
ANSWERED_SHARE = 0.6  # a unit holding this share of a part's weight answers it (the gatekeeper's)
FOLLOWER_ITEMS = 8  # list items a chosen unit may bring along
LEAD_IN = 4  # words of a sentence that only leads in to its code ("For example:")


def chosen_by_words(
    question_parts: Sequence[Part],
    candidates: list[Candidate],
    covered: set[str],
    limit: int,
    settled: AbstractSet[str] = frozenset(),
) -> list[Candidate]:
    """The context units to quote (rules 1-6 of `extractive`'s docstring); `covered` grows by
    the words they match. Words `settled` (a tool's own answer holds them) stay covered."""
    if not candidates or limit <= 0:
        return []
    weights = idf_weights(candidates, question_parts)
    # a part a unit of the context answers is quoted from it, whatever else covers its words
    reopened = _answered_here(question_parts, candidates, weights, covered) - settled
    still_open = covered - reopened
    # the units stating a value asked are preferred; when they cannot answer a third of any
    # part, the units are chosen as if no value were asked (a value is a preference, not a bar)
    for prefer_values in (True, False):
        competing = _competing(question_parts, candidates, weights, still_open, prefer_values)
        now_covered = set(still_open)
        chosen = _covering(competing, weights, now_covered, limit)
        if any(share(now_covered, weights, p) >= MIN_SHARE_OF_QUESTION for p in question_parts):
            break
    else:
        return []
    covered |= now_covered
    chosen += _supporting(chosen, competing, limit)
    chosen += _section_lead(chosen, candidates, weights, question_parts)
    return chosen + _followers(chosen, candidates)


def _answered_here(
    question_parts: Sequence[Part],
    candidates: Sequence[Candidate],
    weights: Mapping[str, float],
    covered: set[str],
) -> set[str]:
    """The words of the parts a unit of the context answers as fully as the guaranteed passages
    do (it holds, with its heading, ANSWERED_SHARE of the part's weight and no less than they
    cover): what the guaranteed passages cover of them does not keep that unit out. A deep
    search's supplement (guaranteed, C28) adds to the first search's pages; it never displaces
    one that answered."""
    answered: set[str] = set()
    for part in question_parts:
        needed = max(ANSWERED_SHARE, share(covered, weights, part))
        if any(share(candidate.match.keys(), weights, part) >= needed for candidate in candidates):
            answered |= part.stems
    return answered


def _competing(
    question_parts: Sequence[Part],
    candidates: list[Candidate],
    weights: Mapping[str, float],
    covered: set[str],
    prefer_values: bool = True,
) -> list[Candidate]:
    """The candidates that may be quoted, best first. For each part of the question that the
    context can answer at all (its pages hold MIN_SHARE_OF_QUESTION of the part's weight), what
    the part still needs is its words the pages hold and the guaranteed passages do not cover;
    a candidate competes when its score on those words reaches RELEVANCE_MIN of the best one's,
    on a page that holds PAGE_MIN_SHARE of their weight."""
    held = page_words(candidates)
    attainable = set().union(*held.values())
    competing: dict[tuple[int, int], Candidate] = {}
    for part in question_parts:
        if share(attainable, weights, part) < MIN_SHARE_OF_QUESTION:
            continue  # no scraps for a part the context cannot answer
        needed = (part.stems & attainable) - covered
        scores = [_needed_score(candidate, needed, weights) for candidate in candidates]
        top = max(scores, default=0.0)
        relevant = [
            candidate
            for candidate, score in zip(candidates, scores, strict=True)
            if score > 0
            and score >= RELEVANCE_MIN * top
            and _needed_share(held[candidate.page], needed, weights) >= PAGE_MIN_SHARE
        ]
        kept = _valued(part, relevant) if prefer_values else relevant
        competing.update((candidate.place, candidate) for candidate in kept)
    return best_first(competing.values())


def _valued(part: Part, relevant: list[Candidate]) -> list[Candidate]:
    """The units that state a value of the kind the part asks for, when it asks one and some
    do; otherwise all of them (rule 1)."""
    if not part.values:
        return relevant
    valued = [c for c in relevant if unit_values(c.unit.text) & part.values]
    return valued or relevant


def _needed_share(
    held: AbstractSet[str], needed: AbstractSet[str], weights: Mapping[str, float]
) -> float:
    total = sum(weights[key] for key in needed)
    return sum(weights[key] for key in needed & held) / total if total else 1.0


def _needed_score(
    candidate: Candidate, needed: AbstractSet[str], weights: Mapping[str, float]
) -> float:
    matched = sum(weights[key] * s for key, s in candidate.match.items() if key in needed)
    return matched * candidate.norm * candidate.cue


def _covering(
    competing: list[Candidate],
    weights: Mapping[str, float],
    covered: set[str],
    limit: int,
) -> list[Candidate]:
    """Greedy: each time the unit adding the most uncovered weight (ties: the higher score)."""
    chosen: list[Candidate] = []
    remaining = list(competing)
    words = 0
    while remaining and len(chosen) < limit and (not chosen or words < ANSWER_WORDS):
        gains = [gain(candidate, weights, covered) for candidate in remaining]
        best = max(range(len(remaining)), key=lambda i: (gains[i], remaining[i].score, -i))
        if gains[best] <= 0:
            break
        candidate = remaining.pop(best)
        chosen.append(candidate)
        words += candidate.unit.words
        covered.update(candidate.match)
    return chosen


def share(covered: Collection[str], weights: Mapping[str, float], part: Part) -> float:
    """The share of a part's weight the covered words hold."""
    total = sum(weights[key] for key in part.stems)
    held = sum(weights[key] for key in part.stems if key in covered)
    return held / total if total else 0.0


def _supporting(chosen: list[Candidate], competing: list[Candidate], limit: int) -> list[Candidate]:
    """Further units of the best chosen unit's section that score at least SUPPORT_MIN of it,
    while there is room."""
    if not chosen:
        return []
    first = max(chosen, key=lambda candidate: candidate.score)
    top, sections = first.score, {first.section}
    taken = {candidate.place for candidate in chosen}
    words = sum(candidate.unit.words for candidate in chosen)
    extra: list[Candidate] = []
    for candidate in competing:
        if len(chosen) + len(extra) >= limit or words >= ANSWER_WORDS:
            break
        own = any(strength >= 1.0 for strength in candidate.match.values())
        if (
            candidate.place not in taken
            and candidate.unit.kind != ROW  # rows are alternatives, not the rest of an answer
            and candidate.section in sections
            and own
            and candidate.score >= SUPPORT_MIN * top
        ):
            extra.append(candidate)
            words += candidate.unit.words
    return extra


def _section_lead(
    chosen: list[Candidate],
    candidates: list[Candidate],
    weights: Mapping[str, float],
    question_parts: Sequence[Part],
) -> list[Candidate]:
    """When the best chosen unit's section is headed by the question (its heading holds
    TITLE_SHARE of a part's weight: an FAQ entry, a section named after the asked thing), the
    section is the answer: its other units join in text order, up to SECTION_WORDS in all."""
    if not chosen:
        return []
    first = max(chosen, key=lambda candidate: candidate.score)
    heading = first.unit.context_stems
    if max((share(heading, weights, part) for part in question_parts), default=0) < TITLE_SHARE:
        return []
    taken = {candidate.place for candidate in chosen}
    words = sum(candidate.unit.words for candidate in chosen)
    rest = sorted(
        (c for c in candidates if c.section == first.section and c.place not in taken),
        key=lambda candidate: candidate.unit.position,
    )
    extra: list[Candidate] = []
    for candidate in rest:
        if words + candidate.unit.words > SECTION_WORDS:
            break
        extra.append(candidate)
        words += candidate.unit.words
    return extra


def _followers(chosen: list[Candidate], candidates: list[Candidate]) -> list[Candidate]:
    """The list items (or the unit after a colon, or a short lead-in to code such as "For
    example:") that follow each chosen unit."""
    by_place = {candidate.place: candidate for candidate in candidates}
    taken = {candidate.place for candidate in chosen}
    followers: list[Candidate] = []
    for candidate in chosen:
        introduces = candidate.unit.introduces
        place = (candidate.passage, candidate.unit.position + 1)
        while len(followers) < FOLLOWER_ITEMS and place in by_place and place not in taken:
            following = by_place[place]
            kind = following.unit.kind
            numbered = kind == ITEM and _NUMBERED.match(following.unit.text)
            lead_in = kind == SENTENCE and following.unit.code and following.unit.words <= LEAD_IN
            same_page = following.unit.labels == candidate.unit.labels
            if not (numbered or (lead_in and same_page) or (introduces and kind == SENTENCE)):
                break  # bullets and table rows compete on their own: only relevant ones show
            introduces = following.unit.introduces
            taken.add(place)
            followers.append(following)
            place = (place[0], place[1] + 1)
    return followers


def best_first(candidates: Iterable[Candidate]) -> list[Candidate]:
    return sorted(candidates, key=lambda c: (-c.score, c.passage, c.unit.position))
