"""Extractive answers for the offline provider: the best units (sentences, list items, table
rows, records: `runner.llm.units`) of the given passages for a question, quoted with the pages they
came from. docs/offline.md ("Writing answers") describes the same rules for pipeline authors.

Writing the answer: what is chosen from the units' scores (`offline_scoring`: by their words;
rules 1-6, the words' choice, in `offline_choosing`; `offline_meaning`: what their meaning adds
where the pages carry it), in which order, cited how (`offline_selection`).

Choosing, after the guaranteed passages (C23: quoted first, matched or not, their words covered
— unless a unit of the context answers a part as fully: 60 % of its weight, and no less than they
cover; a deep search's supplement never displaces a first-search sentence that answered, while
the words a tool's own answer holds stay covered):
1. competing: for each part of the question the context can answer at all (its pages hold a
   third of the part's weight), the units that reach 40 % of the best score on what the part
   still needs, on a page that holds half of that; where the part asks for a value of a kind
   ("what is the fee": an amount of money; "how many years": a duration; `runner.text.questions`)
   and some of those units state one, only they compete for it: "The fee of €65 is charged…"
   is quoted, not "- the fee, once per plan year." (unless they cannot answer a third of any
   part: then all compete, as if no value were asked);
2. greedily, the unit adding the most weight of question words not yet covered, until none adds
   any, 4 are chosen or they reach 120 words;
3. then, while there is room, units of the best unit's section scoring 60 % of it;
4. when the best unit's section is headed by the question (its heading holds 60 % of a part's
   weight), the section's other units join in text order, up to 160 words in all;
5. a chosen unit brings the numbered steps that follow it (and the sentence after its colon, or
   a lead-in of up to 4 words to code: "For example:"); its code block comes with it
   (`runner.llm.units.reading`, `runner.llm.units.code`);
6. when no part of the question is a third covered, nothing is chosen;
7. where the pages carry meaning, a chosen unit that means nothing of the question is left
   out, and the unit meaning it most and the first page by meaning's best units are added —
   unless the question is answered already: every part is held (60 % of its weight) by a
   tool's own answer (guaranteed, C23; not pages, as a deep search's supplement quotes), or
   asks for an amount of money, a duration or a percentage and a unit quoted for it states
   one (the fee's amount, the years). A unit that only means something near the question
   ("Damage caused by transport is not covered by the warranty" beside the machine's warranty
   a tool looked up) is then not mixed in;
8. a list item is quoted with the sentence that introduces its list (the one ending with a
   colon before it): "- the no-fault-found fee, once per plan year." alone says the opposite
   of "…with no charge for: - the no-fault-found fee, once per plan year.".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TypeGuard

from runner.llm.providers.offline_choosing import (
    ANSWERED_SHARE,
    best_first,
    chosen_by_words,
    share,
)
from runner.llm.providers.offline_meaning import Meaning, by_meaning
from runner.llm.providers.offline_named import on_the_asked_product
from runner.llm.providers.offline_passages import (
    OfflinePassage,
    cited_by,
    passages_from_facts,
)
from runner.llm.providers.offline_scoring import (
    Candidate,
    idf_weights,
    normal_text,
    unit_candidates,
)
from runner.llm.providers.offline_selection import Selection
from runner.llm.units.reading import (
    ITEM,
    SENTENCE,
    Unit,
    unit_stems,
)
from runner.text.questions import NUMBER, Part, parts, unit_values

# the passages and their citations live in offline_passages; these names are also read from here
__all__ = [
    "OfflinePassage",
    "Selection",
    "cited_by",
    "passages_from_facts",
    "quoted_coverage",
    "select",
]

# a sentence that opens by pointing back at what the sentence before it named ("Its battery…")
_POINTS_BACK = re.compile(r"^(?:it|its|it's|they|their|them|he|she|his|her)\b", re.IGNORECASE)


# --- selection ----------------------------------------------------------------------------------


def select(
    question: str,
    passages: Sequence[OfflinePassage],
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
    candidates = unit_candidates(question_parts, passages, exclude)
    selection = Selection(passages, question)
    covered: set[str] = set()
    seen: set[str] = set()
    given = _guaranteed(candidates, passages, per_guaranteed)
    for candidate in given:
        if _choose(selection, candidate, seen):
            covered.update(candidate.match)
    context = [c for c in candidates if not passages[c.passage].guaranteed]
    by_guaranteed = set(covered)
    # a tool's own answer (a guaranteed passage that is not pages a search found) settles the
    # words it holds: a page matching them as fully does not reopen them (the deep search's
    # supplement, labelled pages, does not settle them: the first search's pages still compete)
    by_tool = {key for c in given if not c.unit.labels for key in c.match}
    answering = chosen_by_words(question_parts, context, covered, limit, settled=by_tool)
    meant = by_meaning(question, passages, context)
    if meant is not None:
        answering = _read_by_meaning(meant, question, context, answering, given)
        # what is covered is what is quoted: not the words of a unit meaning left out
        covered = by_guaranteed | {key for candidate in answering for key in candidate.match}
    for candidate in answering:
        _choose(selection, candidate, seen)
    for candidate in _lead_ins(selection, candidates):
        _choose(selection, candidate, seen)
    selection.covered = covered
    return selection


def _read_by_meaning(
    meant: Meaning,
    question: str,
    context: Sequence[Candidate],
    answering: list[Candidate],
    given: list[Candidate],
) -> list[Candidate]:
    """What the words chose that bears on the question, with what meaning adds (rule 7) unless
    the question is answered already (`_answered`); of a question naming a model number, only
    what bears on that product (`on_the_asked_product`)."""
    admits = on_the_asked_product(question, context, meant.model)
    kept = [candidate for candidate in meant.kept(answering) if admits(candidate)]
    question_parts = parts(question)
    if _answered(question_parts, context, given, kept):
        return kept
    # a question asking a value is not answered here (`_answered`): meaning looks on freely
    settled = len(question_parts) == 1 and not question_parts[0].values
    return meant.read(kept, admits, one_part=settled)


def _answered(
    question_parts: Sequence[Part],
    context: Sequence[Candidate],
    given: Sequence[Candidate],
    chosen: Sequence[Candidate],
) -> bool:
    """Every part is answered: the guaranteed units of a tool's own answer (C23; not pages a
    search found, which a deep search's supplement quotes) hold ANSWERED_SHARE of its weight,
    or it asks for a value other than a bare number and a unit quoted for it (of the guaranteed
    passages or chosen by the words) that holds that share of it states one ("what is the
    fee": "The fee of €65 is charged…"). A words' match alone does not answer: in users' words
    the words often match a page that does not, which meaning then finds."""
    weights = idf_weights([*given, *context], question_parts)

    def holds(units: Sequence[Candidate], part: Part) -> bool:
        held = {key for candidate in units for key in candidate.match}
        return share(held, weights, part) >= ANSWERED_SHARE

    def valued(part: Part) -> bool:
        quoted = [*given, *chosen]
        asked = part.values - {NUMBER}  # any digit is a number: too weak to call it answered
        return (
            bool(asked)
            and holds(quoted, part)
            and any(
                part.stems & candidate.match.keys() and unit_values(candidate.unit.text) & asked
                for candidate in quoted
            )
        )

    # a tool's own answer; not pages (labelled or cited: what a search found, a deep search's
    # supplement of quotes), whose words' match is a words' match like the context's
    answers = [candidate for candidate in given if not candidate.unit.labels]
    return bool(question_parts) and all(
        (bool(answers) and holds(answers, part)) or valued(part) for part in question_parts
    )


def _lead_ins(selection: Selection, candidates: Sequence[Candidate]) -> list[Candidate]:
    """The sentence introducing the list of each chosen list item, when it is not chosen
    (rule 6): the unit before the item's run of items, in its section, ending with a colon;
    and the sentence before a chosen sentence that points back at it ("It…", "Its…": what
    "it" is must be quoted too)."""
    by_place = {candidate.place: candidate for candidate in candidates}
    found: list[Candidate] = []
    for passage, position in sorted(selection.chosen):
        item = selection.chosen[(passage, position)]
        if item.kind == SENTENCE and _POINTS_BACK.match(item.text):
            named = by_place.get((passage, position - 1))
            if _quotable_before(named, item, selection, found):
                found.append(named)
            continue
        if item.kind != ITEM:
            continue
        before = position - 1
        while (passage, before) in by_place and by_place[(passage, before)].unit.kind == ITEM:
            before -= 1  # back over the list's other items
        lead = by_place.get((passage, before))
        if lead is None or lead.place in selection.chosen or lead in found:
            continue
        if lead.unit.introduces and _same_section(lead.unit, item):
            found.append(lead)
    return found


def _quotable_before(
    named: Candidate | None, item: Unit, selection: Selection, found: list[Candidate]
) -> TypeGuard[Candidate]:
    """The sentence just before `item`, in its section, not quoted yet."""
    if named is None or named.place in selection.chosen or named in found:
        return False
    return named.unit.kind == SENTENCE and _same_section(named.unit, item)


def _same_section(unit: Unit, other: Unit) -> bool:
    return (unit.labels, unit.section) == (other.labels, other.section)


def quoted_coverage(
    question: str, passages: Sequence[OfflinePassage], *, per_guaranteed: int, limit: int
) -> tuple[float, set[str], str]:
    """What the units an answer would quote hold of the question: the share of its weight
    (each word weighs its inverse document frequency over the passages' units, so rare words
    and names weigh most), every stem they hold (in their text, their code or their headings)
    and their text."""
    question_parts = parts(question)
    weights = idf_weights(unit_candidates(question_parts, passages, question), question_parts)
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


def _guaranteed(
    candidates: Sequence[Candidate], passages: Sequence[OfflinePassage], per_block: int
) -> list[Candidate]:
    """Every unit of a guaranteed passage; of a cited block with more than `per_block` units,
    its best `per_block`."""
    blocks: dict[tuple[int, tuple[str, ...]], list[Candidate]] = {}
    for candidate in candidates:
        if passages[candidate.passage].guaranteed:
            blocks.setdefault((candidate.passage, candidate.unit.labels), []).append(candidate)
    chosen: list[Candidate] = []
    for block in blocks.values():
        chosen.extend(best_first(block)[:per_block] if len(block) > per_block else block)
    return chosen


def _choose(selection: Selection, candidate: Candidate, seen: set[str]) -> bool:
    normal = normal_text(candidate.unit.text)
    if normal in seen:
        return False
    seen.add(normal)
    selection.chosen[candidate.place] = candidate.unit
    return True
