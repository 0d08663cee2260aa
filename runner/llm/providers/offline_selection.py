"""What an offline answer chose, as text: the chosen units per passage, each line ending with
its citation, a unit's code block after its line (docs/offline.md, "Citations" and "Code")."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from runner.llm.providers.offline_code import fenced
from runner.llm.providers.offline_passages import Passage, cited_by
from runner.llm.providers.offline_records import compact_record
from runner.llm.providers.offline_units import RECORD, Unit, citation_text, closed
from runner.text.words import content_words, stem


@dataclass
class Selection:
    """Chosen units per passage, printed in passage order and text order within a passage."""

    passages: Sequence[Passage]
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
        names."""
        wanted = {stem(word) for word in content_words(self.question)}
        lines: list[_Line] = []
        for passage, position in sorted(self.chosen):
            unit = self.chosen[(passage, position)]
            citation = citation_text(cited_by(self.passages[passage], unit.labels)) if cite else ""
            shown = compact_record(unit.fields, wanted) if unit.kind == RECORD else unit.text
            following = self.chosen.get((passage, position + 1))
            if unit.introduces and (following is None or following.labels != unit.labels):
                shown = closed(shown)  # what it introduced is not quoted
            last = lines[-1] if lines else None
            if last and not last.code and (last.passage, last.citation) == (passage, citation):
                last.texts.append(shown)
            else:
                lines.append(_Line(passage, citation, [shown]))
            lines[-1].code = unit.code
        return "\n".join(line.text() for line in lines)


@dataclass
class _Line:
    passage: int
    citation: str
    texts: list[str]
    code: str = ""  # the last unit's code block: it ends the line

    def text(self) -> str:
        quoted = f"{' '.join(self.texts)} {self.citation}".rstrip()
        return f"{quoted}\n{fenced(self.code)}" if self.code else quoted
