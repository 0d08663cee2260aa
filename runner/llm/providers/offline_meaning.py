"""The offline answerer's reading by meaning: each unit's cosine with the question, by the model
that embedded the corpus's pages (docs/offline.md, "Reading by meaning").

A retrieval whose search was by meaning hands its pages over with the model's name and the
precision of its weights (runner.tools.meaning); each unit's cosine is runner.llm.units.meaning's,
which embeds a unit once however many purposes of a round read it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from runner.llm.citations import source_labels
from runner.llm.providers.offline_passages import OfflinePassage
from runner.llm.providers.offline_scoring import Candidate
from runner.llm.units.meaning import cosines, model_of
from runner.llm.units.reading import Unit

# --- what meaning adds to what the words chose --------------------------------------------------

MEANING_FLOOR = 0.3  # a unit's cosine with the question below this does not answer it…
RELATED_SHARE = 0.5  # …and a unit below this share of the best unit's cosine does not bear on it
FIRST_UNITS = 2  # units the first page by meaning gives when the words chose none of it
# pages meaning may add to what the words chose: every page of a search's default top 5 whose
# best unit bears on the question. Search ranks pages better than a unit's cosine does (on the
# users'-words sets the search's first page is the gold one more often than the page of the
# unit meaning most), so a page it returned is not left out for a sentence of another
MEANING_PAGES = 5
# a page read alone (`read_page`, a deep search's) whose own vector is this far from the question
# does not bear on it, whatever words it shares: a page vector is of the whole page, steadier
# than a sentence's, and on-topic pages of a manual reach 0.4 where pages of another appliance
# or subject that share a word ("clean the lint filter" for a dishwasher's filter) do not
PAGE_FLOOR = 0.4
# a part of a question read with its names put as "it" ("is it quiet": offline_named) is short,
# and its cosines run lower than a whole question's: on the support handbook the row that answers
# it ("Noise, spin — KW-620: 76 dB …") reaches 0.31-0.34, rows that only name the model
# (warranty, connectivity) 0.05-0.13
PART_MEANING_FLOOR = 0.25
# units after a unit meaning added that it brings while they bear on the question: a need and
# its remedy within a few sentences; more makes each of five pages a paragraph (on the
# users'-words sets 2 raised the answer checks over 1 by 0.016-0.046, the median answer by
# about 25 words)
READ_ON = 2
# when the words chose the unit meaning the question most, the answer is there: another page's
# unit is added only when it means the question nearly as much. On a manual of one product
# family every unit of the topic reaches the floor (a dishwasher's water supply and its safety
# notes 0.44-0.47 beside its filter-cleaning steps 0.67 for "how do I clean the filter")
CLOSE_SHARE = 0.8
MEANT_CODE_LINES = 8  # lines of a unit's code embedded with it (the model reads 256 pieces)


@dataclass
class Meaning:
    """The cosines of the context's units with the question, and the page search by meaning
    ranked first."""

    cosine: dict[tuple[int, int], float]
    context: list[Candidate]  # the context's units
    first: list[Candidate]  # the units of the first page by meaning
    model: tuple[str, str] = ("", "")  # (model, precision) that read them

    @property
    def best(self) -> float:
        return max(self.cosine.values(), default=0.0)

    def bears(self, candidate: Candidate) -> bool:
        """The unit bears on the question: it holds a code or number the question names (an
        error code, a model number: the model reads `E24` as noise, the words know it
        exactly), or its cosine reaches the floor, or half the best's."""
        if any(any(ch.isdigit() for ch in key) for key in candidate.match):
            return True
        cosine = self.cosine.get(candidate.place, 0.0)
        return cosine >= MEANING_FLOOR or cosine >= RELATED_SHARE * self.best

    def kept(self, chosen: list[Candidate]) -> list[Candidate]:
        """The units the words chose that bear on the question: a sentence of a page that only
        shares a word with it is not mixed into the answer."""
        return [candidate for candidate in chosen if self.bears(candidate)]

    def read(
        self,
        chosen: list[Candidate],
        admits: Callable[[Candidate], bool] = lambda _: True,
        *,
        one_part: bool = False,
    ) -> list[Candidate]:
        """What the words chose, with what meaning adds, each when its page gave no unit yet and
        it reaches MEANING_FLOOR: the first page by meaning read as a whole (its best units, at
        most FIRST_UNITS), then the best unit of each other page, the page meaning the question
        most first (the unit that means it most, whatever words it uses), up to MEANING_PAGES
        pages in all; each unit added brings the ones after it that bear on the question too
        (`_read_on`). Only units `admits` lets in are added or brought; a page whose best unit
        it does not gives none. Of a question of `one_part` asking no value whose unit meaning it
        most the words chose, only units reaching CLOSE_SHARE of that unit's cosine are added (a
        question of parts is read as a whole: its best unit may answer one part alone; the
        caller passes False for a question asking a value the words did not quote)."""
        pages = {candidate.page for candidate in chosen}
        floor = MEANING_FLOOR
        if one_part and chosen and max(self.cosine.get(c.place, 0.0) for c in chosen) >= self.best:
            floor = max(floor, CLOSE_SHARE * self.best)  # the words found what meaning ranks first
        added: list[Candidate] = []
        first = self.ranked(self.first)[:FIRST_UNITS]
        best_first = [c for c in first if self.meets(c, floor) and admits(c)]
        if best_first and best_first[0].page not in pages:
            added += best_first
            pages.add(best_first[0].page)
        read = 1 if best_first else 0
        for candidate in self.ranked(self.context):
            if read >= MEANING_PAGES or not self.meets(candidate, floor):
                break
            if candidate.page not in pages:
                # a page whose best unit is not let in gives none: what it means is that unit's
                pages.add(candidate.page)
                if admits(candidate):
                    added.append(candidate)
                    read += 1
        return _in_order(added + self._read_on(added, chosen, admits)) + chosen

    def _read_on(
        self,
        added: Sequence[Candidate],
        chosen: Sequence[Candidate],
        admits: Callable[[Candidate], bool],
    ) -> list[Candidate]:
        """The units after each unit meaning added, in its section, while they bear on the
        question too (reach MEANING_FLOOR), READ_ON at most: a manual names a need in one
        sentence and meets it in the next ones ("It is also possible to use a list as a queue…;
        however, lists are not efficient for this purpose." — "…pops from the beginning of a
        list is slow…" — "To implement a queue, use collections.deque…"), and a user's words
        describe the need."""
        by_place = {candidate.place: candidate for candidate in self.context}
        taken = {candidate.place for candidate in [*added, *chosen]}
        found: list[Candidate] = []
        for candidate in added:
            for step in range(1, READ_ON + 1):
                following = by_place.get((candidate.passage, candidate.unit.position + step))
                if (
                    following is None
                    or following.section != candidate.section
                    or not self.meets(following)
                    or not admits(following)
                ):
                    break
                if following.place not in taken:
                    found.append(following)
                    taken.add(following.place)
        return found

    def meets(self, candidate: Candidate, floor: float = MEANING_FLOOR) -> bool:
        return self.cosine[candidate.place] >= floor

    def ranked(self, candidates: Sequence[Candidate]) -> list[Candidate]:
        return sorted(candidates, key=lambda c: (-self.cosine[c.place], c.passage, c.unit.position))


def unit_meaning(model: tuple[str, str], text: str, units: Sequence[Unit]) -> Unit | None:
    """The unit that means the text most, when its cosine reaches PART_MEANING_FLOOR; None
    when none does or the model cannot run here."""
    values = cosines(model, text, [_meant_text(unit) for unit in units]) if units else None
    if values is None:
        return None
    best = max(range(len(units)), key=values.__getitem__)
    return units[best] if values[best] >= PART_MEANING_FLOOR else None


def page_bears(passage: OfflinePassage) -> bool:
    """Whether a page read alone bears on the question by meaning: True unless it carries its
    page vector's cosine with the question (runner.tools.meaning.page_meaning) and that cosine
    is below PAGE_FLOOR. A page without one (no page vectors) is left to its words."""
    cosine = (passage.meaning or {}).get("cosine")
    return not isinstance(cosine, (int, float)) or cosine >= PAGE_FLOOR


def by_meaning(
    question: str, passages: Sequence[OfflinePassage], context: Sequence[Candidate]
) -> Meaning | None:
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
    return Meaning(cosine, list(context), first, model)


def _in_order(candidates: Iterable[Candidate]) -> list[Candidate]:
    return sorted(candidates, key=lambda candidate: candidate.place)


def _meant_text(unit: Unit) -> str:
    """What a unit means: its text under its heading (the section says what it is about), and
    the first lines of the code it introduces, which is quoted with it ("Enum types are created
    using the CREATE TYPE command, for example:" means `CREATE TYPE mood AS ENUM ('sad', 'ok',
    'happy')`: the question's words are often in the code alone)."""
    heading = unit.own_heading
    text = f"{heading}: {unit.text}" if heading else unit.text
    code = "\n".join(unit.code.strip().splitlines()[:MEANT_CODE_LINES])
    return f"{text}\n{code}" if code else text


def _first_page(
    passages: Sequence[OfflinePassage], context: Sequence[Candidate]
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
