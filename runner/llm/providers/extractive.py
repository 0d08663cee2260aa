"""Extractive sentence selection for the offline provider: the best sentences of the given
passages for a question, kept with the sources they came from.

A passage is split into units (lines, then sentences; markdown headings and `[source]` labels
dropped). Each content word of the question gets a weight: rarer among the units means heavier
(inverse document frequency, with the units as documents), and a word no unit contains gets the
highest weight, since it is what is missing. Units are then chosen greedily: each time the unit
that adds the most weight of question words not yet covered, until no unit adds any or the limit
is reached; a chosen unit that ends with a colon or is followed by list items ("1. …", "- …")
brings those items along while places are left, so that steps are not cut off. When the chosen
units cover less than a third of the question's weight, nothing is chosen and the caller says the
context does not answer.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from runner.text import content_words, sentences, stem, token_stems, tokenize

MIN_SHARE_OF_QUESTION = 1 / 3  # the chosen units must cover this share of the question's weight

_ANY_WORD = re.compile(r"[^\W_]")
_LIST_ITEM = re.compile(r"^\s*(?:\d{1,3}[.)]|[-*•])\s")
_LABEL = re.compile(r"^\s*\[[^\]\n]{1,120}\]\s*|\s*\[[^\]\n]{1,120}\]\s*$")


@dataclass(frozen=True)
class Passage:
    """The offline provider's view of a passage: its text and its sources as JSON objects."""

    text: str
    sources: tuple[Mapping[str, Any], ...] = ()
    guaranteed: bool = False


@dataclass
class _Unit:
    passage: int
    position: int
    text: str
    stems: frozenset[str]
    score: float = 0.0


@dataclass
class Selection:
    """Chosen units per passage, in passage order and original order within a passage."""

    passages: Sequence[Passage]
    chosen: dict[int, list[_Unit]] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not self.chosen

    def text(self, *, cite: bool) -> str:
        lines = []
        for index in sorted(self.chosen):
            body = " ".join(unit.text for unit in sorted(self.chosen[index], key=_position))
            citation = citation_of(self.passages[index].sources) if cite else ""
            lines.append(f"{body} {citation}".rstrip())
        return "\n".join(lines)


def _position(unit: _Unit) -> int:
    return unit.position


def passages_from_facts(items: Iterable[Any]) -> list[Passage]:
    """Passages given as mappings ({text, sources, guaranteed}) or as objects with attributes."""
    return [_passage(item) for item in items or ()]


def _passage(item: Any) -> Passage:
    if isinstance(item, str):
        return Passage(item)
    get = item.get if isinstance(item, Mapping) else lambda key, d=None: getattr(item, key, d)
    sources = tuple(_source(source) for source in get("sources", ()) or ())
    return Passage(str(get("text", "") or ""), sources, bool(get("guaranteed", False)))


def _source(source: Any) -> Mapping[str, Any]:
    if isinstance(source, Mapping):
        return source
    return source.to_json() if hasattr(source, "to_json") else {"document": str(source)}


def citation_of(sources: Sequence[Mapping[str, Any]]) -> str:
    """`[manual.md p. 3; policy.md]`, or "" when there are no sources."""
    parts: list[str] = []
    for source in sources:
        label = str(source.get("document", ""))
        if source.get("page") is not None:
            label += f" p. {source['page']}"
        if label and label not in parts:
            parts.append(label)
    return f"[{'; '.join(parts)}]" if parts else ""


def units(text: str) -> list[str]:
    """Lines, then sentences; markdown headings, blank lines and `[source]` labels dropped."""
    found: list[str] = []
    for line in text.splitlines():
        line = _LABEL.sub("", line.strip())
        if line and not line.startswith("#"):
            found.extend(unit for unit in sentences(line) if _ANY_WORD.search(unit))
    return found


def select(
    question: str,
    passages: Sequence[Passage],
    *,
    per_guaranteed: int,
    limit: int,
    exclude: str = "",
) -> Selection:
    """Guaranteed passages each give their best `per_guaranteed` units, matched or not (C23:
    they reach the answer); the other passages give up to `limit` units by the rule in the
    module's docstring. A unit that repeats a chosen one, or that occurs in `exclude` (the
    question itself, say), is skipped."""
    wanted = {stem(word) for word in content_words(question)}
    excluded = f" {_normal(exclude)} " if exclude else ""
    all_units = [
        # a unit keeps only the question's stems it holds: all that scoring needs
        _Unit(index, position, unit, frozenset(token_stems(unit) & wanted))
        for index, passage in enumerate(passages)
        for position, unit in enumerate(units(passage.text))
        if not excluded or f" {_normal(unit)} " not in excluded
    ]
    weights = _weights(wanted, all_units)
    for unit in all_units:
        unit.score = _weight_of(unit.stems, weights)
    selection = Selection(passages)
    seen: set[str] = set()
    for index, passage in enumerate(passages):
        if passage.guaranteed:
            own = [unit for unit in all_units if unit.passage == index]
            for unit in _best(own)[:per_guaranteed]:
                _choose(selection, unit, seen)
    others = [u for u in all_units if not passages[u.passage].guaranteed]
    for unit in _answering(others, weights, limit):
        _choose(selection, unit, seen)
    return selection


def _weights(wanted: set[str], all_units: Sequence[_Unit]) -> dict[str, float]:
    count = len(all_units)
    frequency = dict.fromkeys(wanted, 0)
    for unit in all_units:
        for key in unit.stems:
            frequency[key] += 1
    return {key: math.log((count + 1) / (seen + 0.5)) for key, seen in frequency.items()}


def _weight_of(words: Iterable[str], weights: Mapping[str, float]) -> float:
    return sum(weights[word] for word in words)


def _answering(candidates: list[_Unit], weights: dict[str, float], limit: int) -> list[_Unit]:
    chosen: list[_Unit] = []
    covered: set[str] = set()
    remaining = _best(candidates)
    while remaining and len(chosen) < limit:
        gains = [_weight_of(unit.stems - covered, weights) for unit in remaining]
        best = max(range(len(remaining)), key=lambda i: (gains[i], -i))
        if gains[best] <= 0:
            break
        covered |= remaining[best].stems
        chosen.append(remaining.pop(best))
    if _weight_of(covered, weights) < MIN_SHARE_OF_QUESTION * sum(weights.values()):
        return []
    return chosen + _followers(chosen, candidates, limit - len(chosen))


def _followers(chosen: list[_Unit], candidates: list[_Unit], room: int) -> list[_Unit]:
    """The list items (or the unit after a colon) that follow each chosen unit, while there is
    room."""
    taken = {(unit.passage, unit.position) for unit in chosen}
    by_place = {(unit.passage, unit.position): unit for unit in candidates}
    followers: list[_Unit] = []
    for unit in chosen:
        place = (unit.passage, unit.position + 1)
        introduces = unit.text.rstrip().endswith(":")
        while len(followers) < room and place in by_place and place not in taken:
            following = by_place[place]
            if not (introduces or _LIST_ITEM.match(following.text)):
                break
            introduces = False
            taken.add(place)
            followers.append(following)
            place = (place[0], place[1] + 1)
    return followers


def _best(scored: list[_Unit]) -> list[_Unit]:
    return sorted(scored, key=lambda u: (-u.score, u.passage, u.position))


def _choose(selection: Selection, unit: _Unit, seen: set[str]) -> None:
    normal = _normal(unit.text)
    if normal not in seen:
        seen.add(normal)
        selection.chosen.setdefault(unit.passage, []).append(unit)


def _normal(text: str) -> str:
    return " ".join(tokenize(text))
