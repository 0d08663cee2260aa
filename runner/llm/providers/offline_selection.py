"""What an offline answer chose, as text: the chosen units per passage, each line ending with
its citation, a unit's code block after its line (docs/offline.md, "Citations" and "Code")."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from runner.llm.citations import citation_text
from runner.llm.providers.offline_passages import OfflinePassage, cited_by
from runner.llm.providers.offline_records import Record, compact_record, comparison
from runner.llm.units.code import fenced
from runner.llm.units.reading import ITEM, RECORD, ROW, Unit, closed
from runner.llm.units.rows import for_codes, is_code
from runner.text.questions import compares, names
from runner.text.words import content_words, stem, tokenize


@dataclass
class Selection:
    """Chosen units per passage, printed in passage order and text order within a passage."""

    passages: Sequence[OfflinePassage]
    question: str = ""
    chosen: dict[tuple[int, int], Unit] = field(default_factory=dict)
    covered: set[str] = field(default_factory=set)  # question stems the chosen units match

    @property
    def empty(self) -> bool:
        return not self.chosen

    def text(self, *, cite: bool) -> str:
        """One line per passage and citation: the units, then their citation (`cited_by`); a
        unit's code block follows its line, verbatim. A unit ending with a colon whose next unit
        is not quoted ends with a full stop instead; a record shows the fields the question
        names; rows of one table that a comparing question chose are compared field by field,
        where the first of them stands."""
        wanted = {stem(word) for word in content_words(self.question)}
        compared = self._row_comparisons(wanted, cite=cite)
        codes = {name for name in names(self.question) if is_code(name)}
        lines: list[_Line] = []
        for passage, position in sorted(self.chosen):
            unit = self.chosen[(passage, position)]
            if (passage, position) in compared:
                lines.extend(_Line(passage, "", [line]) for line in compared[(passage, position)])
                continue
            citation = citation_text(cited_by(self.passages[passage], unit.labels)) if cite else ""
            shown = compact_record(unit.fields, wanted) if unit.kind == RECORD else unit.text
            if unit.kind == ROW:  # a specification row: the columns of the codes asked about
                shown = for_codes(unit.fields, codes) or shown
            shown = without_footnotes(shown)
            if unit.introduces and not self._introduced(passage, position):
                shown = closed(shown)  # what it introduced is not quoted
            last = lines[-1] if lines else None
            if last and not last.code and (last.passage, last.citation) == (passage, citation):
                last.texts.append(shown)
            else:
                lines.append(_Line(passage, citation, [shown]))
            lines[-1].code = unit.code
        return "\n".join(line.text() for line in lines)

    def _introduced(self, passage: int, position: int) -> bool:
        """What the unit introduces is quoted: the unit after it, or the next one quoted of its
        passage is a list item or a table row of its section (a list quoted in part)."""
        unit = self.chosen[(passage, position)]
        following = self.chosen.get((passage, position + 1))
        if following is not None:
            return following.labels == unit.labels
        later = [place for place in self.chosen if place[0] == passage and place[1] > position]
        if not later:
            return False
        nearest = self.chosen[min(later)]
        same = (nearest.labels, nearest.section) == (unit.labels, unit.section)
        return same and nearest.kind in (ITEM, ROW)

    def _row_comparisons(self, wanted: set[str], *, cite: bool) -> dict[tuple[int, int], list[str]]:
        """For a comparing question, the chosen rows of each table (two or more with the same
        columns; those whose first cell the question names, when it names two or more) as one
        comparison: its lines under the first row's place, and no lines under the other rows'
        (they are compared there, or the question did not name them)."""
        if not compares(self.question):
            return {}
        tables: dict[tuple[int, tuple[str, ...]], list[tuple[int, int]]] = {}
        for place in sorted(self.chosen):
            unit = self.chosen[place]
            if unit.kind == ROW and unit.fields:
                columns = tuple(key for key, _ in unit.fields)
                tables.setdefault((place[0], columns), []).append(place)
        found: dict[tuple[int, int], list[str]] = {}
        for (passage, _), rows in tables.items():
            named = [place for place in rows if self._names_row(self.chosen[place])]
            places = named if len(named) >= 2 else rows
            if len(places) < 2:
                continue
            records = [self._record(passage, self.chosen[place], cite=cite) for place in places]
            found[places[0]] = comparison(records, wanted).split("\n")
            # the other rows compared, and the rows of the table the question did not name
            found.update((place, []) for place in rows if place != places[0])
        return found

    def _names_row(self, unit: Unit) -> bool:
        """The question names the row: it holds every word of its first cell (`git merge`)."""
        asked = {stem(token) for token in tokenize(self.question)}
        first = {stem(token) for token in tokenize(unit.fields[0][1])}
        return bool(first) and first <= asked

    def _record(self, passage: int, unit: Unit, *, cite: bool) -> Record:
        labels = cited_by(self.passages[passage], unit.labels) if cite else ()
        return Record(unit.fields, labels)


_INLINE_CODE = re.compile(r"(`[^`]*`)")
_FOOTNOTE = re.compile(r"\s?\[\d{1,3}\](?!\()")  # a page's footnote reference: "[1]", "text.[2]"


def without_footnotes(text: str) -> str:
    """The quoted text without the page's footnote references (`[1]`, outside inline code): in
    an answer a bracketed number is a passage's number, so a quoted `[2]` would cite the second
    passage for a sentence of another page."""
    pieces = _INLINE_CODE.split(text)
    kept = [piece if i % 2 else _FOOTNOTE.sub("", piece) for i, piece in enumerate(pieces)]
    return "".join(kept).strip()


@dataclass
class _Line:
    """A line of the offline answer: the units quoted from one passage, and its citation."""

    passage: int
    citation: str
    texts: list[str]
    code: str = ""  # the last unit's code block: it ends the line

    def text(self) -> str:
        quoted = f"{' '.join(self.texts)} {self.citation}".rstrip()
        return f"{quoted}\n{fenced(self.code)}" if self.code else quoted
