"""Extractive answers for the offline provider: the best units (sentences, list items, table
rows, records: `offline_units`) of the given passages for a question, quoted with the pages they
came from. docs/offline.md ("Writing answers") describes the same rules for pipeline authors.

Scoring, per unit:
- each content word of the question weighs its BM25 inverse document frequency over the units
  (a word no unit holds weighs most: it is what is missing); framing words ("difference",
  "mean", "way") weigh half;
- a unit matches a word it holds (1) and a word its section heading holds (+0.5);
- the sum is length-normalised as BM25 does (k1 = 1.2, b = 0.5), then scaled by how much of the
  question the unit's page holds (from 0.5 to 1) and by 0.7 for each place its page stands
  behind its search's first (the search saw more than these words), and raised for the first
  unit of a section (+25 %), for the question's word pairs in the question's order (up to +50 %)
  and for a cue the unit meets (+50 %: a number for "how many", a date for "when", a modal or a
  negation for "can I", a reason for "why": `offline_question`).

Choosing, after the guaranteed passages (C23: quoted first, matched or not, their words covered
— unless a unit of the context answers a part as fully: 60 % of its weight, and no less than they
cover; a deep search's supplement never displaces a first-search sentence that answered):
1. competing: for each part of the question the context can answer at all (its pages hold a
   third of the part's weight), the units that reach 40 % of the best score on what the part
   still needs, on a page that holds half of that;
2. greedily, the unit adding the most weight of question words not yet covered, until none adds
   any, 4 are chosen or they reach 120 words;
3. then, while there is room, units of the best unit's section scoring 60 % of it;
4. when the best unit's section is headed by the question (its heading holds 60 % of a part's
   weight), the section's other units join in text order, up to 160 words in all;
5. a chosen unit brings the numbered steps that follow it (and the sentence after its colon, or
   a lead-in of up to 4 words to code: "For example:"); its code block comes with it
   (`offline_units`, `offline_code`);
6. when no part of the question is a third covered, nothing is chosen.
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from runner.llm.citations import source_labels
from runner.llm.providers.offline_meaning import cosines, model_of
from runner.llm.providers.offline_passages import (
    Passage,
    cited_by,
    passages_from_facts,
)
from runner.llm.providers.offline_question import FRAMING_STEMS, Part, parts, unit_cues
from runner.llm.providers.offline_selection import Selection
from runner.llm.providers.offline_units import (
    ITEM,
    ROW,
    SENTENCE,
    Unit,
    parse,
    unit_stems,
    word_pairs,
)
from runner.text.words import tokenize

# the passages and their citations live in offline_passages; these names are also read from here
__all__ = [
    "Passage",
    "Selection",
    "cited_by",
    "passages_from_facts",
    "quoted_coverage",
    "select",
]

_NUMBERED = re.compile(r"^\d{1,3}[.)]\s")
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


@dataclass
class _Candidate:
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


# --- selection ----------------------------------------------------------------------------------


def select(
    question: str,
    passages: Sequence[Passage],
    *,
    per_guaranteed: int,
    limit: int,
    exclude: str = "",
) -> Selection:
    """Guaranteed passages give their units (the best `per_guaranteed` of each cited block when
    they have more), matched or not (C23); the other passages give up to `limit` units by the
    rules in the module's docstring. A unit that repeats a chosen one, or that occurs in
    `exclude` (the task's own text, say), is left out."""
    question_parts = parts(question)
    candidates = _candidates(question_parts, passages, exclude)
    selection = Selection(passages, question)
    covered: set[str] = set()
    seen: set[str] = set()
    for candidate in _guaranteed(candidates, passages, per_guaranteed):
        if _choose(selection, candidate, seen):
            covered.update(candidate.match)
    context = [c for c in candidates if not passages[c.passage].guaranteed]
    answering = _answering(question_parts, context, covered, limit)
    meant = by_meaning(question, passages, context)
    if meant is not None:
        answering = meant.read(meant.kept(answering))
        covered.update(key for candidate in answering for key in candidate.match)
    for candidate in answering:
        _choose(selection, candidate, seen)
    selection.covered = covered
    return selection


# --- reading by meaning (docs/offline.md, "Reading by meaning") ---------------------------------

MEANING_FLOOR = 0.3  # a unit's cosine with the question below this does not answer it…
RELATED_SHARE = 0.5  # …and a unit below this share of the best unit's cosine does not bear on it
FIRST_UNITS = 2  # units the first page by meaning gives when the words chose none of it


@dataclass
class _Meaning:
    """The cosines of the context's units with the question, and the page search by meaning
    ranked first."""

    cosine: dict[tuple[int, int], float]
    context: list[_Candidate]  # the context's units
    first: list[_Candidate]  # the units of the first page by meaning

    @property
    def best(self) -> float:
        return max(self.cosine.values(), default=0.0)

    def bears(self, candidate: _Candidate) -> bool:
        """The unit bears on the question: its cosine reaches the floor, or half the best's."""
        cosine = self.cosine.get(candidate.place, 0.0)
        return cosine >= MEANING_FLOOR or cosine >= RELATED_SHARE * self.best

    def kept(self, chosen: list[_Candidate]) -> list[_Candidate]:
        """The units the words chose that bear on the question: a sentence of a page that only
        shares a word with it is not mixed into the answer."""
        return [candidate for candidate in chosen if self.bears(candidate)]

    def read(self, chosen: list[_Candidate]) -> list[_Candidate]:
        """What the words chose, with what meaning adds: the unit that means most what the
        question asks (whatever words it uses), and the first page by meaning read as a whole
        (its best units, at most FIRST_UNITS) — each when its page gave no unit yet and it
        reaches MEANING_FLOOR."""
        pages = {candidate.page for candidate in chosen}
        added: list[_Candidate] = []
        for group, count in (
            (self.ranked(self.context), 1),
            (self.ranked(self.first), FIRST_UNITS),
        ):
            best = [c for c in group[:count] if self.cosine[c.place] >= MEANING_FLOOR]
            if best and best[0].page not in pages:
                added += best
                pages.add(best[0].page)
        return _in_order(added) + chosen

    def ranked(self, candidates: Sequence[_Candidate]) -> list[_Candidate]:
        return sorted(candidates, key=lambda c: (-self.cosine[c.place], c.passage, c.unit.position))


def by_meaning(
    question: str, passages: Sequence[Passage], context: Sequence[_Candidate]
) -> _Meaning | None:
    """The context's units read by meaning, or None when no passage can be (no page vectors,
    or the model cannot run here): the words alone then decide."""
    model = model_of([passage.meaning for passage in passages if not passage.guaranteed])
    if model is None or not context:
        return None
    values = cosines(model, question, [_meant_text(candidate.unit) for candidate in context])
    if values is None:
        return None
    cosine = {c.place: value for c, value in zip(context, values, strict=True)}
    first_page = _first_page(passages, context)
    first = [candidate for candidate in context if candidate.page == first_page]
    return _Meaning(cosine, list(context), first)


def _in_order(candidates: Iterable[_Candidate]) -> list[_Candidate]:
    return sorted(candidates, key=lambda candidate: candidate.place)


def _meant_text(unit: Unit) -> str:
    """What a unit means: its text under its heading (the section says what it is about)."""
    heading = unit.section.rsplit(" › ", 1)[-1]
    return f"{heading}: {unit.text}" if heading else unit.text


def _first_page(
    passages: Sequence[Passage], context: Sequence[_Candidate]
) -> tuple[int, tuple[str, ...]] | None:
    """The page search by meaning ranked first (a passage, or a labelled page inside one)."""
    for index, passage in enumerate(passages):
        first = (passage.meaning or {}).get("first")
        if not isinstance(first, Mapping) or passage.guaranteed:
            continue
        label = source_labels([first])
        for candidate in context:
            if candidate.passage != index:
                continue
            own = candidate.unit.labels or source_labels(passage.sources)
            if label and set(label) <= set(own):
                return candidate.page
    return None


def quoted_coverage(
    question: str, passages: Sequence[Passage], *, per_guaranteed: int, limit: int
) -> tuple[float, set[str], str]:
    """What the units an answer would quote hold of the question: the share of its weight
    (each word weighs its inverse document frequency over the passages' units, so rare words
    and names weigh most), every stem they hold (in their text, their code or their headings)
    and their text."""
    question_parts = parts(question)
    weights = _idf(_candidates(question_parts, passages, question), question_parts)
    chosen = select(
        question, passages, per_guaranteed=per_guaranteed, limit=limit, exclude=question
    )
    total = sum(weights.values())
    held = sum(weight for key, weight in weights.items() if key in chosen.covered)
    share = held / total if total else 0.0
    words = set(chosen.covered).union(
        *(
            unit.stems | unit.context_stems | unit_stems(unit.code)
            for unit in chosen.chosen.values()
        )
    )
    return share, words, chosen.text(cite=False)


def _candidates(
    question_parts: Sequence[Part], passages: Sequence[Passage], exclude: str
) -> list[_Candidate]:
    wanted = frozenset().union(*(part.stems for part in question_parts))
    excluded = f" {_normal(exclude)} " if exclude else ""
    found: list[_Candidate] = []
    for index, passage in enumerate(passages):
        for unit in parse(passage.text):
            if excluded and f" {_normal(_TRAILING_REFERENCE.sub('', unit.text))} " in excluded:
                continue  # the question itself, as an FAQ or a table of contents repeats it
            match = dict.fromkeys(unit.stems & wanted, 1.0)
            for key in unit.context_stems & wanted:  # the heading adds to what the unit holds
                match[key] = match.get(key, 0.0) + CONTEXT_WEIGHT
            found.append(_Candidate(index, unit, match))
    _score(found, question_parts, passages)
    return found


def _score(
    candidates: list[_Candidate], question_parts: Sequence[Part], passages: Sequence[Passage]
) -> None:
    """BM25-like: idf over the candidates, length-normalised, times the bonuses (cue, lead),
    the page factor (how much of the question the unit's page holds) and the search's rank of
    the unit's page (RANK_DECAY a place)."""
    if not candidates:
        return
    weights = _idf(candidates, question_parts)
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
        candidate.score = _gain(candidate, weights, set())


def _phrase_share(unit: Unit, question_pairs: frozenset[tuple[str, str]]) -> float:
    return len(unit.pairs & question_pairs) / len(question_pairs) if question_pairs else 0.0


def _page_shares(
    candidates: Sequence[_Candidate], weights: Mapping[str, float]
) -> dict[tuple[int, tuple[str, ...]], float]:
    """For each page (a passage, or a labelled page inside one), the share of the question's
    weight its units and headings hold."""
    total = sum(weights.values()) or 1.0
    held = _page_words(candidates)
    return {page: sum(weights[key] for key in keys) / total for page, keys in held.items()}


def _idf(candidates: Sequence[_Candidate], question_parts: Sequence[Part]) -> dict[str, float]:
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


def _cue_factor(candidate: _Candidate, question_parts: Sequence[Part]) -> float:
    if not candidate.match:
        return 1.0
    met = unit_cues(candidate.unit.text)
    for part in question_parts:
        if part.cues & met and part.stems & candidate.match.keys():
            return 1 + CUE_BONUS
    return 1.0


def _gain(candidate: _Candidate, weights: Mapping[str, float], covered: set[str]) -> float:
    """The weight of the question words the candidate matches that are not covered yet."""
    added = sum(
        weights[key] * strength for key, strength in candidate.match.items() if key not in covered
    )
    return added * candidate.norm * candidate.cue


def _guaranteed(
    candidates: Sequence[_Candidate], passages: Sequence[Passage], per_block: int
) -> list[_Candidate]:
    """Every unit of a guaranteed passage; of a cited block with more than `per_block` units,
    its best `per_block`."""
    blocks: dict[tuple[int, tuple[str, ...]], list[_Candidate]] = {}
    for candidate in candidates:
        if passages[candidate.passage].guaranteed:
            blocks.setdefault((candidate.passage, candidate.unit.labels), []).append(candidate)
    chosen: list[_Candidate] = []
    for block in blocks.values():
        chosen.extend(_best(block)[:per_block] if len(block) > per_block else block)
    return chosen


def _answering(
    question_parts: Sequence[Part],
    candidates: list[_Candidate],
    covered: set[str],
    limit: int,
) -> list[_Candidate]:
    """The context units to quote (rules 1-6 of the module's docstring); `covered` grows by
    the words they match."""
    if not candidates or limit <= 0:
        return []
    weights = _idf(candidates, question_parts)
    # a part a unit of the context answers is quoted from it, whatever else covers its words
    still_open = covered - _answered_here(question_parts, candidates, weights, covered)
    competing = _competing(question_parts, candidates, weights, still_open)
    now_covered = set(still_open)
    chosen = _covering(competing, weights, now_covered, limit)
    if not any(_share(now_covered, weights, p) >= MIN_SHARE_OF_QUESTION for p in question_parts):
        return []
    covered |= now_covered
    chosen += _supporting(chosen, competing, limit)
    chosen += _section_lead(chosen, candidates, weights, question_parts)
    return chosen + _followers(chosen, candidates)


def _answered_here(
    question_parts: Sequence[Part],
    candidates: Sequence[_Candidate],
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
        needed = max(ANSWERED_SHARE, _share(covered, weights, part))
        if any(_share(candidate.match.keys(), weights, part) >= needed for candidate in candidates):
            answered |= part.stems
    return answered


def _competing(
    question_parts: Sequence[Part],
    candidates: list[_Candidate],
    weights: Mapping[str, float],
    covered: set[str],
) -> list[_Candidate]:
    """The candidates that may be quoted, best first. For each part of the question that the
    context can answer at all (its pages hold MIN_SHARE_OF_QUESTION of the part's weight), what
    the part still needs is its words the pages hold and the guaranteed passages do not cover;
    a candidate competes when its score on those words reaches RELEVANCE_MIN of the best one's,
    on a page that holds PAGE_MIN_SHARE of their weight."""
    held = _page_words(candidates)
    attainable = set().union(*held.values())
    competing: dict[tuple[int, int], _Candidate] = {}
    for part in question_parts:
        if _share(attainable, weights, part) < MIN_SHARE_OF_QUESTION:
            continue  # no scraps for a part the context cannot answer
        needed = (part.stems & attainable) - covered
        scores = [_needed_score(candidate, needed, weights) for candidate in candidates]
        top = max(scores, default=0.0)
        for candidate, score in zip(candidates, scores, strict=True):
            relevant = score > 0 and score >= RELEVANCE_MIN * top
            if relevant and _needed_share(held[candidate.page], needed, weights) >= PAGE_MIN_SHARE:
                competing[candidate.place] = candidate
    return _best(competing.values())


def _page_words(candidates: Sequence[_Candidate]) -> dict[tuple[int, tuple[str, ...]], set[str]]:
    """The question stems each page holds (a passage, or a labelled page inside one)."""
    held: dict[tuple[int, tuple[str, ...]], set[str]] = {}
    for candidate in candidates:
        held.setdefault(candidate.page, set()).update(candidate.match)
    return held


def _needed_share(held: set[str], needed: set[str], weights: Mapping[str, float]) -> float:
    total = sum(weights[key] for key in needed)
    return sum(weights[key] for key in needed & held) / total if total else 1.0


def _needed_score(candidate: _Candidate, needed: set[str], weights: Mapping[str, float]) -> float:
    matched = sum(weights[key] * s for key, s in candidate.match.items() if key in needed)
    return matched * candidate.norm * candidate.cue


def _covering(
    competing: list[_Candidate],
    weights: Mapping[str, float],
    covered: set[str],
    limit: int,
) -> list[_Candidate]:
    """Greedy: each time the unit adding the most uncovered weight (ties: the higher score)."""
    chosen: list[_Candidate] = []
    remaining = list(competing)
    words = 0
    while remaining and len(chosen) < limit and (not chosen or words < ANSWER_WORDS):
        gains = [_gain(candidate, weights, covered) for candidate in remaining]
        best = max(range(len(remaining)), key=lambda i: (gains[i], remaining[i].score, -i))
        if gains[best] <= 0:
            break
        candidate = remaining.pop(best)
        chosen.append(candidate)
        words += candidate.unit.words
        covered.update(candidate.match)
    return chosen


def _share(covered: Collection[str], weights: Mapping[str, float], part: Part) -> float:
    """The share of a part's weight the covered words hold."""
    total = sum(weights[key] for key in part.stems)
    held = sum(weights[key] for key in part.stems if key in covered)
    return held / total if total else 0.0


def _supporting(
    chosen: list[_Candidate], competing: list[_Candidate], limit: int
) -> list[_Candidate]:
    """Further units of the best chosen unit's section that score at least SUPPORT_MIN of it,
    while there is room."""
    if not chosen:
        return []
    first = max(chosen, key=lambda candidate: candidate.score)
    top, sections = first.score, {first.section}
    taken = {candidate.place for candidate in chosen}
    words = sum(candidate.unit.words for candidate in chosen)
    extra: list[_Candidate] = []
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
    chosen: list[_Candidate],
    candidates: list[_Candidate],
    weights: Mapping[str, float],
    question_parts: Sequence[Part],
) -> list[_Candidate]:
    """When the best chosen unit's section is headed by the question (its heading holds
    TITLE_SHARE of a part's weight: an FAQ entry, a section named after the asked thing), the
    section is the answer: its other units join in text order, up to SECTION_WORDS in all."""
    if not chosen:
        return []
    first = max(chosen, key=lambda candidate: candidate.score)
    heading = first.unit.context_stems
    if max((_share(heading, weights, part) for part in question_parts), default=0) < TITLE_SHARE:
        return []
    taken = {candidate.place for candidate in chosen}
    words = sum(candidate.unit.words for candidate in chosen)
    rest = sorted(
        (c for c in candidates if c.section == first.section and c.place not in taken),
        key=lambda candidate: candidate.unit.position,
    )
    extra: list[_Candidate] = []
    for candidate in rest:
        if words + candidate.unit.words > SECTION_WORDS:
            break
        extra.append(candidate)
        words += candidate.unit.words
    return extra


def _followers(chosen: list[_Candidate], candidates: list[_Candidate]) -> list[_Candidate]:
    """The list items (or the unit after a colon, or a short lead-in to code such as "For
    example:") that follow each chosen unit."""
    by_place = {candidate.place: candidate for candidate in candidates}
    taken = {candidate.place for candidate in chosen}
    followers: list[_Candidate] = []
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


def _best(candidates: Iterable[_Candidate]) -> list[_Candidate]:
    return sorted(candidates, key=lambda c: (-c.score, c.passage, c.unit.position))


def _choose(selection: Selection, candidate: _Candidate, seen: set[str]) -> bool:
    normal = _normal(candidate.unit.text)
    if normal in seen:
        return False
    seen.add(normal)
    selection.chosen[candidate.place] = candidate.unit
    return True


def _normal(text: str) -> str:
    return " ".join(tokenize(text))
