"""Whether the context answers each part of a question that names a code, one quotable unit at
a time: the gatekeeper's and `missing_info`'s check that a name the question asks about is
answered where it is said, not merely mentioned somewhere on a page (docs/offline.md,
`gatekeeper`, rule 5).

A page can hold a name without saying anything about it: a table cut across pages repeats its
header row, so every model name of a specification table stands on every page of it, and a
manual's title lists its models above every page. Nor can a page's vector or the search's
rankings tell `KW-620` from `KW-720X` (the model reads such codes as noise). So a part that names
something ("is the KW-620 quiet") is covered only by one unit an answer would quote — a
sentence, a list item, a table row read with its header, a record — that holds both

- the name, in its own text or its own heading (not the document's title, not another page's
  header), or in the prose just before it under the same heading (the sentence before a
  sentence, "It …"; the sentence leading in to a list item's list), and
- what the part asks of it: 60 % of the part's other content words (in the unit, its heading or
  its columns' names), or, where the pages carry their meaning, the part's own meaning — the
  part read with its names put as "it" ("is it quiet") reaches PART_MEANING_FLOOR with the unit.

Where the units cannot be read by meaning but the passages carry a retrieval's evidence, the
evidence judges what is asked (it reads the page's meaning), and a unit holding the names is
enough for this check.

The names this reads are codes: names with a digit (`KW-620`, `E24`, `KP-20418`). A part naming
none is left to the other rules (its words on one page, every name among the quoted units).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from runner.llm.providers.offline_meaning import model_of, unit_meaning
from runner.llm.providers.offline_passages import OfflinePassage
from runner.llm.providers.offline_question import Part, names, parts
from runner.llm.providers.offline_rows import is_code
from runner.llm.providers.offline_units import ITEM, SENTENCE, Unit, parse, unit_stems
from runner.text.words import stem, tokenize

NAMED_PART_MIN_COVERAGE = 0.6  # of a part's words besides its names, in one unit holding them
_PROSE = (SENTENCE, ITEM)  # what refers back to a name said before it ("It …")
_DETERMINER = r"(?:(?:the|a|an|my|our|your|this|that|their|its)\s+)?"


@dataclass(frozen=True)
class NamedPart:
    part: Part
    names: tuple[str, ...]  # lower-cased, as `names` gives them

    @property
    def name_stems(self) -> frozenset[str]:
        return frozenset(stem(token) for name in self.names for token in tokenize(name))

    @property
    def asked(self) -> frozenset[str]:
        """The stems of what the part asks of its names: its content words but the names."""
        return self.part.stems - self.name_stems

    def as_it(self) -> str:
        """The part's text with its names (and their determiner) put as "it": what its meaning
        is without the codes the model cannot read ("Is the KW-620 quiet" -> "Is it quiet")."""
        text = self.part.text
        for name in self.names:
            pattern = rf"\b{_DETERMINER}(?<![\w.-]){re.escape(name)}(?![\w-])"
            text = re.sub(pattern, "it", text, flags=re.IGNORECASE)
        return text


def named_parts(question: str) -> list[NamedPart]:
    """The parts of the question that name a code, each with the codes it holds."""
    asked = [name for name in names(question) if is_code(name)]
    found = []
    for part in parts(question):
        own = tuple(name for name in asked if _holds_name(part.stems, name))
        if own:
            found.append(NamedPart(part, own))
    return found


def uncovered_named_parts(
    question: str, passages: Sequence[OfflinePassage], *, unread_counts: bool = False
) -> list[NamedPart]:
    """The parts naming something that no one unit of the passages answers: no unit holds the
    names, or none holding them holds what is asked of them, by its words or, where the pages
    carry their meaning, by meaning. Where they do not (no page vectors, or the model cannot run
    here), `unread_counts` says whether a unit holding the names counts: a retrieval's evidence
    reads the meaning of the page, not the codes the unit holds."""
    units = [unit for passage in passages for unit in parse(passage.text)]
    model = model_of([passage.meaning for passage in passages if not passage.guaranteed])
    found = []
    for part in named_parts(question):
        covered = _covered(part, units, model)
        if covered is False or (covered is None and not unread_counts):
            found.append(part)
    return found


def answering_units(question: str, passages: Sequence[OfflinePassage]) -> list[Unit]:
    """The unit that answers each part of the question naming a code, by its words or (the
    pages carrying their meaning) by meaning, in the order of the parts; [] unless every such
    part has one. A page read alone (`read_page`) answers such a question with them: "is the
    KW-620 quiet" is answered by the row `Noise, spin — … KW-620: 76 dB …`, whose words are
    not the question's."""
    units = [unit for passage in passages for unit in parse(passage.text)]
    model = model_of([passage.meaning for passage in passages])
    found: list[Unit] = []
    for part in named_parts(question):
        answering = _answering(part, units, model)
        if not isinstance(answering, Unit):
            return []
        if answering not in found:
            found.append(answering)
    return found


def _covered(part: NamedPart, units: Sequence[Unit], model: tuple[str, str] | None) -> bool | None:
    """True: a unit holds the names and what is asked of them; False: none does; None: units
    hold the names, not the part's words, and cannot be read by meaning."""
    answering = _answering(part, units, model)
    return answering if isinstance(answering, bool) or answering is None else True


def _answering(
    part: NamedPart, units: Sequence[Unit], model: tuple[str, str] | None
) -> Unit | bool | None:
    """The unit holding the names and what is asked of them; False: no unit holds the names;
    None: units hold them, not the part's words, and cannot be read by meaning (or none of
    them means the part)."""
    naming = [unit for index, unit in enumerate(units) if _names(units, index, part)]
    if not naming:
        return False
    asked = part.asked
    if not asked:  # "And the KW-720X?": holding the name is all it asks
        return naming[0]
    for unit in naming:
        held = unit.stems | unit.context_stems
        if len(asked & held) / len(asked) >= NAMED_PART_MIN_COVERAGE:
            return unit
    if model is None:
        return None
    return unit_meaning(model, part.as_it(), naming) or False


def _names(units: Sequence[Unit], index: int, part: NamedPart) -> bool:
    """The unit holds every name of the part in its text or its own heading (the innermost
    one: the document's title above a page names every model of a manual), or it is prose
    that follows one that does, under the same heading: the sentence just before it ("The
    XR-200 … . It charges in 2 hours."), or, for a list item, the sentence that leads in to its
    list."""
    unit = units[index]
    own_heading = unit.section.rsplit(" › ", 1)[-1]
    if part.name_stems <= unit.stems | unit_stems(own_heading):
        return True
    if unit.kind not in _PROSE:
        return False
    for before in reversed(units[:index]):
        same_place = (before.section, before.labels) == (unit.section, unit.labels)
        if not same_place or before.kind not in _PROSE:
            return False
        if part.name_stems <= before.stems:
            return True
        if not (unit.kind == ITEM and before.kind == ITEM):  # only a list is walked back
            return False
    return False


def _holds_name(stems: frozenset[str], name: str) -> bool:
    return {stem(token) for token in tokenize(name)} <= stems


def described(uncovered: Sequence[NamedPart]) -> str:
    """For a gatekeeper's reason: the parts, and the names each asks about."""
    return "; ".join(f"{part.part.text} ({', '.join(part.names)})" for part in uncovered)
