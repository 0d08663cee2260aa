"""Excerpts of pages: what a `retrieve` tool with `excerpts: true` hands the answer instead of
whole pages — the units of each page that bear on the task's text, under the page's citation
and place, in page order, with `…` where text was left out (docs/retrieval.md, "Excerpts").

The units are the offline answerer's (`runner.llm.units.reading.parse`): sentences,
list items, table rows, `key: value` records, each with the code it introduces. A unit *bears*
on the task when it holds enough of the task's content words (`runner.text.words`; a dotted
name also by its parts), each word weighed by how rare it is among the retrieval's units (a word
every unit holds, like the module a page documents, tells none of them apart; a section's
heading counts for its first unit): a page bears when its best unit reaches PAGE_SHARE of the
retrieval's best (the search ranked it among the first: only a page far weaker than the best is
cut to its opening), and then its units that reach BEARING_SHARE of the page's best bear. When
the search was by meaning (`mode: vector` or `hybrid`), a unit whose cosine with the task
reaches MEANING_FLOOR (by the model that embedded the pages) bears too.

What comes with a bearing unit, so that it reads as it does on the page:
- a list item or a table row brings the sentence that introduces its list or table (the
  lead-in, ending with a colon), and a bearing lead-in brings the list or table it introduces
  (at most LIST_UNITS of it);
- a table row keeps its table's header (its columns' names), rendered as a Markdown table;
- code stays with the sentence that introduces it (the unit owns it);
- the FOLLOWING unit after it in its section comes too: what follows a claim or an example is
  often what completes it ("This is because …");
- the name it describes: the nearest signature line before it in its section (a unit that is
  only a name or a call, such as `IGNORECASE` or `compile(pattern, flags=0)`, as a reference
  page's entries start), so a description never comes without what it describes.

A section whose heading names the task (holds at least NAMED_SHARE of the task's content words,
and two at least, as a FAQ entry's question or a reference entry's title does) is the answer to
it: its units on the page are kept, up to SECTION_UNITS of them, whether or not they share the
task's words (the explanation after an example seldom repeats the question).

A page none of whose units bears is kept short: its citation, its place and its first
SHORT_UNITS units (it was found, and its place says what it is about; the answer may still
cite it). A page that has no units at all (all code) is kept whole. So a retrieval that found
pages never hands over an empty context.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence

from runner.llm.units.reading import ITEM, ROW, Unit, parse, unit_stems
from runner.retrieval.pages import Page
from runner.text.words import content_words, stems

BEARING_SHARE = 0.5  # a unit bears when its weight reaches this share of its page's best
PAGE_SHARE = 0.3  # a page bears when its best unit reaches this share of the retrieval's best
MEANING_FLOOR = 0.3  # …or its cosine with the task reaches this (a search by meaning)
SHORT_UNITS = 2  # the first units a page gives when none of its units bears
FOLLOWING = 1  # units after a bearing one that come with it (what completes a claim or example)
LIST_UNITS = 12  # items or rows a bearing lead-in brings along
GAP = "…"  # where units were left out
NAMED_SHARE = 0.75  # a heading holding this share of the task's content words names it
SECTION_UNITS = 8  # the units a section named by the task keeps
# a signature line: a dotted name, perhaps called (`compile(pattern, flags=0)`), nothing else
_SIGNATURE = re.compile(r"^[A-Za-z_][\w.]*(\(.*\))?:?$")

# the cosine of each text with the task, or None when the model cannot run here
Cosines = Callable[[str, Sequence[str]], "list[float] | None"]


def excerpts_context(
    pages: Sequence[Page],
    task: str,
    labelled: Callable[[Page], str],
    *,
    cosines: Cosines | None = None,
) -> str:
    """The pages as one context text, each cut to the units that bear on `task`.
    `labelled(page)` is the page as a context block (its citation and place on the first line,
    then its text: `runner.retrieval.reading.pages_context` of the one page); `cosines`, when
    the search was by meaning, scores units by meaning too."""
    wanted = with_parts(stems(content_words(task)))
    if not wanted:  # nothing to weigh units by: the pages as found
        return "\n\n".join(labelled(page) for page in pages)
    blocks = [labelled(page) for page in pages]
    units = [parse(block) for block in blocks]
    bearing = bearing_units(wanted, task, units, cosines)
    return "\n\n".join(
        render(block, page_units, kept_positions(page_units, bearing_here))
        for block, page_units, bearing_here in zip(blocks, units, bearing, strict=True)
    )


def bearing_units(
    wanted: set[str],
    task: str,
    pages: Sequence[Sequence[Unit]],
    cosines: Cosines | None = None,
) -> list[set[int]]:
    """For each page, the positions of its units that bear on the task (see the module's
    docstring): by the task's words, weighed by rarity, and by meaning when it can be read."""
    every = [unit for units in pages for unit in units]
    held = {id(unit): _words(unit) & wanted for unit in every}
    # a section's heading speaks for its first unit (the one that says what it is about)
    heading = {id(unit): set(unit.context_stems) & wanted for unit in every if unit.lead}
    count: Counter[str] = Counter(word for words in held.values() for word in words)
    weight = {word: math.log(1 + len(every) / count[word]) for word in count}

    def weighed(words: set[str]) -> float:
        return sum(weight.get(word, math.log(1 + len(every))) for word in words)

    score = {key: weighed(words) for key, words in held.items()}
    for key, words in heading.items():
        score[key] = max(score[key], weighed(words | held[key]))
    best = max(score.values(), default=0.0)
    meant = _meant(task, every, cosines)
    found = []
    named = {id(unit) for unit in every if _named(unit, wanted)}
    for units in pages:
        # a page bears when its best unit reaches PAGE_SHARE of the retrieval's best; its
        # units bear when they reach BEARING_SHARE of the page's best
        own = max((score[id(unit)] for unit in units), default=0.0)
        floor = BEARING_SHARE * own if best and own >= PAGE_SHARE * best else math.inf
        bearing = {
            unit.position
            for unit in units
            if score[id(unit)] >= floor or meant.get(id(unit), 0.0) >= MEANING_FLOOR
        }
        found.append(bearing | _named_section(units, named))
    return found


def kept_positions(units: Sequence[Unit], bearing: set[int]) -> frozenset[int] | None:
    """The units of one page an excerpt keeps: the bearing ones with what they bring (a list's
    or table's lead-in, the list a lead-in introduces), the first SHORT_UNITS when none bears,
    None (the whole page) when the page has no units."""
    if not units:
        return None
    if not bearing:
        return frozenset(unit.position for unit in units[:SHORT_UNITS])
    kept = set(bearing)
    by_position = {unit.position: index for index, unit in enumerate(units)}
    for position in bearing:
        index = by_position[position]
        unit = units[index]
        if unit.kind in (ITEM, ROW):
            lead = _lead_in(units, index)
            if lead is not None:
                kept.add(lead.position)
        if unit.introduces:
            kept.update(member.position for member in _members(units, index))
        for near in units[index + 1 : index + 1 + FOLLOWING]:
            if near.section == unit.section:
                kept.add(near.position)
        signature = _signature_before(units, index)
        if signature is not None:
            kept.add(signature.position)
    return frozenset(kept)


def render(labelled: str, units: Sequence[Unit], kept: frozenset[int] | None) -> str:
    """One page's excerpt: its first line (citation and place), then the kept units in page
    order, consecutive sentences joined, a heading line where the page's section changes, `…`
    where units were left out."""
    if kept is None or len(kept) == len(units):
        return labelled
    first_line = labelled.split("\n", 1)[0]
    place = units[0].section if units else ""
    lines = [first_line]
    section = place
    previous: Unit | None = None
    header: tuple[str, ...] = ()
    for index, unit in enumerate(units):
        if unit.position not in kept:
            continue
        if index and (previous is None or units[index - 1] is not previous):
            lines.append(GAP)
            header = ()
        if unit.section != section:
            lines.append(f"## {unit.section.rsplit(' › ', 1)[-1]}")
            section, header = unit.section, ()
        if unit.kind == ROW and unit.fields:
            names = tuple(name for name, _value in unit.fields)
            if names != header:
                lines += [_row(names), _row(("---",) * len(names))]
                header = names
            lines.append(_row(tuple(value for _name, value in unit.fields)))
        elif previous is not None and _joins(previous, unit) and lines[-1] != GAP:
            lines[-1] = f"{lines[-1]} {unit.text}"
        else:
            lines.append(unit.text)
            header = ()
        if unit.code:
            lines.append(f"```\n{unit.code}\n```")
        previous = unit
    if previous is not units[-1]:
        lines.append(GAP)
    return "\n".join(lines)


# --- helpers ---------------------------------------------------------------------------------


def _words(unit: Unit) -> set[str]:
    """The stems a unit holds: its text's and its code's (a question often names a function
    only its code spells out), dotted names with their parts."""
    return with_parts(unit.stems | unit_stems(unit.code) if unit.code else unit.stems)


def with_parts(words: Iterable[str]) -> set[str]:
    """Stems with the parts of each dotted name (`importlib.import` also `importlib` and
    `import`): a task names `importlib.import_module` where its page says `import_module`, or
    the other way round."""
    found = set(words)
    for word in list(found):
        if "." in word:
            found |= stems(part for part in word.split(".") if len(part) > 1)
    return found


def _meant(task: str, units: Sequence[Unit], cosines: Cosines | None) -> dict[int, float]:
    if cosines is None or not units:
        return {}
    values = cosines(task, [_meant_text(unit) for unit in units])
    if values is None:
        return {}
    return {id(unit): value for unit, value in zip(units, values, strict=True)}


def _meant_text(unit: Unit) -> str:
    heading = unit.section.rsplit(" › ", 1)[-1]
    return f"{heading}: {unit.text}" if heading else unit.text


def _named(unit: Unit, wanted: set[str]) -> bool:
    """Whether the unit's section heading names the task (NAMED_SHARE of its content words)."""
    held = len(unit.context_stems & wanted)
    return bool(unit.section) and held >= 2 and held >= NAMED_SHARE * len(wanted)


def _named_section(units: Sequence[Unit], named: set[int]) -> set[int]:
    """The positions of a page's units in sections whose heading names the task, up to
    SECTION_UNITS a section."""
    kept: set[int] = set()
    taken: Counter[str] = Counter()
    for unit in units:
        if id(unit) in named and taken[unit.section] < SECTION_UNITS:
            kept.add(unit.position)
            taken[unit.section] += 1
    return kept


def _signature_before(units: Sequence[Unit], index: int) -> Unit | None:
    """The nearest signature line before a unit, in its section (the unit itself when it is
    one: nothing to add)."""
    for before in range(index - 1, -1, -1):
        unit = units[before]
        if unit.section != units[index].section:
            return None
        if _is_signature(unit):
            return unit
    return None


def _is_signature(unit: Unit) -> bool:
    return unit.kind == "sentence" and not unit.code and bool(_SIGNATURE.match(unit.text.strip()))


def _lead_in(units: Sequence[Unit], index: int) -> Unit | None:
    """The unit that introduces the list or table a unit is in: the nearest before it, in its
    section, past the list's other items or rows, when it ends with a colon."""
    kind = units[index].kind
    for before in range(index - 1, -1, -1):
        unit = units[before]
        if unit.section != units[index].section:
            return None
        if unit.kind == kind and not unit.introduces:
            continue
        return unit if unit.introduces else None
    return None


def _members(units: Sequence[Unit], index: int) -> list[Unit]:
    """The items or rows that follow a lead-in, up to LIST_UNITS."""
    members: list[Unit] = []
    for unit in units[index + 1 :]:
        if unit.kind not in (ITEM, ROW) or unit.section != units[index].section:
            break
        members.append(unit)
        if len(members) >= LIST_UNITS:
            break
    return members


def _joins(previous: Unit, unit: Unit) -> bool:
    """Two sentences one after the other on the page, in the same section: one paragraph."""
    return (
        previous.kind == unit.kind == "sentence"
        and not previous.code
        and previous.section == unit.section
        and unit.position == previous.position + 1
    )


def _row(cells: tuple[str, ...]) -> str:
    return f"| {' | '.join(cells)} |"
