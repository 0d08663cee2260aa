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
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from runner.llm.providers.offline_meaning import unit_meaning
from runner.llm.providers.offline_passages import OfflinePassage
from runner.llm.providers.offline_scoring import Candidate
from runner.llm.units.meaning import model_of
from runner.llm.units.reading import ITEM, SENTENCE, Unit, parse, unit_stems
from runner.llm.units.rows import is_code
from runner.text.questions import Part, names, parts
from runner.text.words import stem, tokenize

NAMED_PART_MIN_COVERAGE = 0.6  # of a part's words besides its names, in one unit holding them
_PROSE = (SENTENCE, ITEM)  # what refers back to a name said before it ("It …")
# a model or part number: letters (its family), a hyphen, digits, at most two letters after them
# (`KW-720X`, `KW-860WD`, `KA-STACK-2`): a product, whose qualities a question asks about; not a
# bare code (`E24`, `utf8`), which is itself what a question asks about, nor a name that goes on
# in words (`sqlite3-placeholders`) nor a measure (`32-bit`)
_MODEL_NUMBER = re.compile(r"^([a-z][a-z-]*)-\d+[a-z]{0,2}$")
# a bare code as a manual writes it, capitals then digits (`E24`, `A2`, `F3`): an error or alarm
# code, whose own section says what it means; another code of its letters (`E20`) is another
# fault. Capitals only, at most two: `utf8`, `python3`, `SHA256` are names, not one of a series
_BARE_CODE = re.compile(r"\b([A-Z]{1,2})\d{1,3}\b")
_DETERMINER = r"(?:(?:the|a|an|my|our|your|this|that|their|its)\s+)?"


@dataclass(frozen=True)
class NamedPart:
    """A part of the question and the names (products, models) it asks about."""

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


def on_the_asked_product(
    question: str, context: Sequence[Candidate], model: tuple[str, str]
) -> Callable[[Candidate], bool]:
    """Whether a unit of the context bears on the model numbers the question names: not on a
    page of other products (`_pages_of_other_products`), saying something the question asks of
    the numbers it holds (`says_of_its_names`), not about other models of the family
    (`about_a_sibling`). The model reads `KW-620` and `KW-720X` alike, so meaning alone cannot
    tell these apart. Every unit does when the question names none."""
    elsewhere = _pages_of_other_products(question, context)

    def admits(candidate: Candidate) -> bool:
        return (
            candidate.page not in elsewhere
            and says_of_its_names(question, candidate.unit, model)
            and not about_a_sibling(question, candidate.unit)
        )

    return admits


def _pages_of_other_products(
    question: str, context: Sequence[Candidate]
) -> set[tuple[int, tuple[str, ...]]]:
    """When the question names a model number, the pages that name model numbers and not one
    it names: a robot vacuum's page (`KV-500X`) does not say whether the `KW-620` is quiet,
    whatever its "quiet" sentences mean. A page naming none (a policy for every appliance)
    may still answer."""
    return _pages_naming_others(
        model_numbers(question), numbers_said, context
    ) | _pages_naming_others(bare_codes(question), _bare_codes_of, context)


def _pages_naming_others(
    asked: frozenset[str],
    said: Callable[[Unit], frozenset[str]],
    context: Sequence[Candidate],
) -> set[tuple[int, tuple[str, ...]]]:
    """The pages whose units (and headings) name codes of a kind the question names, and not
    one it names."""
    if not asked:
        return set()
    named: dict[tuple[int, tuple[str, ...]], set[str]] = {}
    for candidate in context:
        named.setdefault(candidate.page, set()).update(said(candidate.unit))
    return {page for page, numbers in named.items() if numbers and not numbers & asked}


def says_of_its_names(question: str, unit: Unit, model: tuple[str, str]) -> bool:
    """Whether a unit that holds the model numbers a part of the question names says something
    the question asks: it holds a content word of the question besides its names, or it means a
    named part read with its names put as "it" (PART_MEANING_FLOOR). A unit holding only the
    names ("On the KW-510S, KW-620 and KW-700 … worn carbon brushes are common" for "Is the
    KW-620 quiet? And what is the warranty?") does not: its cosine with the whole question is
    raised by the code it shares, which the model reads as shared meaning."""
    named = named_parts(question)
    held = unit.stems | unit.context_stems
    holding = [
        part
        for part in named
        if part.name_stems <= held and any(_MODEL_NUMBER.match(name) for name in part.names)
    ]
    if not holding:
        return True
    asked = frozenset().union(*(part.stems for part in parts(question))) - frozenset().union(
        *(part.name_stems for part in named)
    )
    if not asked or asked & held:
        return True
    return any(unit_meaning(model, part.as_it(), [unit]) is not None for part in holding)


def about_a_sibling(question: str, unit: Unit) -> bool:
    """Whether the unit names codes of the family of one the question names (the letters before
    its first digit: `KW-` of `KW-620`) and none the question names: "The inverter motors of the
    KW-720X, KW-820X and KW-860WD have no brushes" is about other washing machines, not the
    KW-620 asked about. A code of another family (a policy's `KHA-POL-101`, `utf-8` beside
    `latin-1`) says nothing of the kind."""
    return _names_a_sibling(model_numbers(question), numbers_said(unit)) or _names_a_sibling(
        bare_codes(question), _bare_codes_of(unit)
    )


def _names_a_sibling(asked: frozenset[str], said: frozenset[str]) -> bool:
    if not asked or not said or asked & said:
        return False
    return bool({_family(code) for code in asked} & {_family(code) for code in said})


def model_numbers(question: str) -> frozenset[str]:
    """The model or part numbers the question names, lower-cased (`kw-620`)."""
    return frozenset(name for name in names(question) if _MODEL_NUMBER.match(name))


def numbers_said(unit: Unit) -> frozenset[str]:
    """The model or part numbers the unit's text names, lower-cased."""
    return frozenset(token for token in tokenize(unit.text) if _MODEL_NUMBER.match(token))


def bare_codes(text: str) -> frozenset[str]:
    """The bare codes the text writes (`E24`), lower-cased."""
    return frozenset(match.group(0).lower() for match in _BARE_CODE.finditer(text))


def _bare_codes_of(unit: Unit) -> frozenset[str]:
    """The bare codes a unit names, in its text or its own heading (`E20 — Display fault`)."""
    return bare_codes(f"{unit.own_heading}\n{unit.text}")


def _family(code: str) -> str:
    match = _MODEL_NUMBER.match(code)
    return match.group(1) if match else code.rstrip("0123456789")


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
    own_heading = unit.own_heading
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
