"""Offline extraction: fill a JSON Schema's fields from the task text, without a model.

The values come from runner.llm.providers.offline_values, each with its place in the text. A
place is given to one parameter at most, so "the sum of 3 and 4" never makes a=3 and b=3. Which
values a field takes:

- a string field of a shape — a URL, an e-mail address, a time zone, a path or a file, by its
  `format` or the words of its name and description — takes values of that shape (or quoted)
  only: "Tokyo" is no time zone, so it is left out;
- any other string field takes, in this order of trust, the pipeline's lookup-table values
  (`known_values`) listed under its own name (or its singular/plural), then any other table's,
  then quoted phrases, shaped values, model numbers and runs of capitalised words, in text order;
- a number field takes numbers (an `integer` field whole ones only); an `enum` field the allowed
  values the text holds; booleans and objects are left out: guessing them would be inventing.

The fields are then placed by the words around the values: a value right after (or right
before) a word of a field's name goes to that field ("height 80 and width 60", "30 seconds",
"from Europe/Paris to Asia/Tokyo" for `source_zone` and `target_zone`). The other numbers go to
the other number fields in the order they are mentioned ("sum of 3 and 4", "12 plus 30",
"between 5 and 9", "from 5 to 9"; "subtract 3 from 10" puts 10 first): when there are more
numbers than fields, only one run of numbers joined by such words (and, plus, to, by, times …)
of the right length is placed, and when none fits the fields are left out, so a tool with
`clarify` asks. The other scalar fields take their first value not given to another, those of
a shape first; an array field collects every value left, at most MAX_ITEMS (an empty list when
there is none).
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from runner.llm.providers.offline_values import (
    EMAIL,
    FILE,
    PATH,
    QUOTED,
    SLASHED,
    URL,
    ZONE,
    Spans,
    TextValues,
    Value,
)
from runner.text.words import is_stop_word, stem, tokenize, word_spans

# the kinds a shaped field takes, and the words of a field's name or description that ask it
_SHAPES: dict[str, tuple[str, ...]] = {
    URL: (URL,),
    EMAIL: (EMAIL,),
    ZONE: (ZONE,),
    PATH: (PATH, SLASHED, FILE),
    FILE: (FILE, PATH, SLASHED),
}
_FORMATS = {"uri": URL, "url": URL, "iri": URL, "uri-reference": URL, "email": EMAIL}
_FORMATS |= {"idn-email": EMAIL}
_SHAPE_WORDS = (
    (URL, {"url", "uri", "link", "website", "homepage", "endpoint", "webpage"}),
    (EMAIL, {"email", "e-mail", "mail", "mailbox"}),
    (ZONE, {"timezone", "tz", "zone", "tzname"}),
    (PATH, {"path", "directory", "folder", "dir"}),
    (FILE, {"file", "filename", "attachment"}),
)
_GENERIC_ORDER = (QUOTED, URL, EMAIL, ZONE, PATH, FILE, "model", "name")
# a word of the text standing for a word of a field's name ("from" for `source_zone`)
_CUE_SYNONYMS = {
    "from": {"from", "source", "origin", "src", "start", "begin", "sender"},
    "to": {"to", "target", "destination", "dest", "end", "recipient", "into"},
    "into": {"target", "destination", "dest"},
}
_CUE_BEFORE = 3  # words before a value that may name its field
_CUE_AFTER = 2  # words after it ("30 seconds", "3 rooms")
# what joins the numbers of one run: "3 and 4", "12 plus 30", "5 to 9", "10 divided by 2"
_JOINER = re.compile(
    r"^\s*(?:,\s*)?(?:and|plus|\+|to|through|thru|until|till|-|–|by|times|x|\*|×|minus|"
    r"less|or|&|from|over|divided\s+by|multiplied\s+by|and\s+then)?\s*(?:,\s*)?$",
    re.IGNORECASE,
)
MAX_ITEMS = 100  # an array takes at most this many values: a list, not the whole message
_REVERSED = re.compile(r"\b(?:subtract|deduct|take\s+away|take)\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class _Field:
    name: str
    spec: Mapping[str, Any]
    types: frozenset[str]
    array: bool

    @property
    def numeric(self) -> bool:
        return bool(self.types & {"integer", "number"}) and "string" not in self.types

    @property
    def integer(self) -> bool:
        return "integer" in self.types and "number" not in self.types


def extract(text: str, schema: Mapping[str, Any], known_values: Any) -> dict[str, Any]:
    found = TextValues(text, _known_lists(known_values))
    fields = [_field(name, spec) for name, spec in (schema.get("properties") or {}).items()]
    choices = {field.name: _choices(found, field) for field in fields}
    placed = _Placement(text, found)
    scalars = [field for field in fields if not field.array]
    placed.by_cues(scalars, choices)
    placed.numbers([f for f in scalars if f.numeric and f.name not in placed.given], choices)
    # the fields of a shape first: a plain text field takes what they leave
    for field in sorted(scalars, key=lambda f: shape_of(f.name, f.spec) is None):
        if field.name not in placed.given and not field.numeric:
            placed.first_free(field, choices[field.name])
    result: dict[str, Any] = {}
    for field in fields:
        if field.array:
            result[field.name] = placed.every_free(choices[field.name])
        elif field.name in placed.given:
            result[field.name] = placed.given[field.name].value
    return result


def _known_lists(known_values: Any) -> dict[str, list[str]]:
    """known_values is `{name: [values]}`; a bare list is accepted as values of no name."""
    if isinstance(known_values, Mapping):
        return {str(k): [str(v) for v in vs or ()] for k, vs in known_values.items()}
    if isinstance(known_values, Iterable) and not isinstance(known_values, str):
        return {"": [str(v) for v in known_values]}
    return {}


def _field(name: str, spec: Any) -> _Field:
    spec = spec if isinstance(spec, Mapping) else {}
    array = "array" in _types(spec)
    if array:
        items = spec.get("items")
        spec = items if isinstance(items, Mapping) else {}
    return _Field(name, spec, frozenset(_types(spec)), array)


def _types(spec: Mapping[str, Any]) -> set[str]:
    declared = spec.get("type", "string")
    return set(declared) if isinstance(declared, list) else {declared}


# --- what each field may take ------------------------------------------------------------


def _choices(found: TextValues, field: _Field) -> list[Value]:
    """The values the field may take, best first."""
    if "enum" in field.spec:
        return _enum_values(found.text, field.spec["enum"])
    if field.numeric:
        return [v for v in found.numbers if not field.integer or float(v.value).is_integer()]
    if "string" not in field.types:
        return []
    shape = shape_of(field.name, field.spec)
    if shape is not None:
        kinds = _SHAPES[shape]
        # a quoted value of the shape; a quoted path or file name may hold spaces
        quoted = [v for v in found.quoted if shape in (PATH, FILE) or _fits(v, shape)]
        return sorted([*(v for v in found.shaped if v.kind in kinds), *quoted], key=_place)
    own = _own_known(found, field.name)
    if own:
        return own
    others = found.known_values()
    rest = [v for v in [*found.quoted, *found.shaped, *found.names] if v.kind in _GENERIC_ORDER]
    return [*others, *sorted(rest, key=_place)]


def _own_known(found: TextValues, name: str) -> list[Value]:
    wanted = stem(name)
    return [
        value
        for listed in found.known
        if listed and stem(listed) == wanted
        for value in found.known_values(listed)
    ]


def shape_of(name: str, spec: Mapping[str, Any]) -> str | None:
    """The shape a string field asks for: by its `format`, else by a word of its name, else of
    its description ("The IANA time zone", "a file path"); None for any other string."""
    declared = _FORMATS.get(str(spec.get("format", "")).lower())
    if declared is not None:
        return declared
    named = set(name_words(name))
    described = {word.lower() for word in tokenize(str(spec.get("description") or ""))}
    if "time" in described and "zone" in described:
        described.add("timezone")
    for words in (named, described):
        for shape, asking in _SHAPE_WORDS:
            if words & asking:
                return shape
    return None


def _fits(value: Value, shape: str) -> bool:
    """A quoted value of the shape: `'Europe/Paris'` for a time zone, `"a@b.org"` for mail."""
    inner = TextValues(str(value.value), {})
    return any(v.kind == shape and v.end - v.start == len(str(value.value)) for v in inner.shaped)


def _enum_values(text: str, allowed: Sequence[Any]) -> list[Value]:
    """The allowed values the text holds, word for word but for endings, at their place."""
    spans = word_spans(text)
    text_stems = [stem(word.lower()) for _, _, word in spans]
    found = []
    for option in allowed:
        wanted = [stem(token) for token in tokenize(str(option))]
        if not wanted:
            continue
        for index in range(len(spans) - len(wanted) + 1):
            if text_stems[index : index + len(wanted)] == wanted:
                start, end = spans[index][0], spans[index + len(wanted) - 1][1]
                found.append(Value(start, end, option, "enum"))
                break
    return sorted(found, key=_place)


def _place(value: Value) -> int:
    return value.start


# --- placing the values -------------------------------------------------------------------


def name_words(name: str) -> list[str]:
    """The words of a field's name: `targetTimeZone`, `target_time_zone` -> target, time,
    zone."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name)
    return [word.lower() for word in re.split(r"[\W_]+", spaced) if word]


class _Placement:
    """Which value went to which field; a place in the text goes to one field at most."""

    def __init__(self, text: str, found: TextValues) -> None:
        self.text = text
        self.found = found
        self.given: dict[str, Value] = {}
        self.taken = Spans()
        self.words = [(start, end, word.lower()) for start, end, word in word_spans(text)]
        self.word_starts = [start for start, _, _ in self.words]
        self.word_ends = [end for _, end, _ in self.words]

    def free(self, value: Value) -> bool:
        return not self.taken.overlaps(value)

    def give(self, field: _Field, value: Value) -> None:
        self.given[field.name] = value
        self.taken.add(value)

    def by_cues(self, fields: Sequence[_Field], choices: Mapping[str, list[Value]]) -> None:
        """Values named by the words around them, nearest first; a word before the value
        beats one after it at the same distance ("width 60 height 80")."""
        offers = []
        for field in fields:
            cues = _cues(field.name)
            if not cues:
                continue
            for value in choices[field.name]:
                distance = self._cue_distance(value, cues, field.name)
                if distance is not None:
                    offers.append((distance, value.start, field, value))
        for _, _, field, value in sorted(offers, key=lambda offer: offer[:2]):
            if field.name not in self.given and self.free(value):
                self.give(field, value)

    def _cue_distance(self, value: Value, cues: set[str], name: str) -> tuple[int, int] | None:
        """(words away, 0 before / 1 after) of the nearest cue of the field, not across a
        clause's punctuation or another number; a one-letter name only as `a = 3`."""
        if len(name) == 1:
            ahead = self.text[max(0, value.start - 6) : value.start]
            return (0, 0) if re.search(rf"\b{re.escape(name)}\s*[=:]\s*$", ahead, re.I) else None
        last_before = bisect_right(self.word_ends, value.start)
        first_after = bisect_left(self.word_starts, value.end)
        before = self.words[max(0, last_before - _CUE_BEFORE) : last_before]
        after = self.words[first_after : first_after + _CUE_AFTER]
        nearest = None
        for distance, (_start, end, word) in enumerate(reversed(before), 1):
            if self._blocked(end, value.start):
                break
            if stem(word) in cues:
                nearest = (distance, 0)
                break
        for distance, (start, _end, word) in enumerate(after, 1):
            if nearest is not None and distance > nearest[0]:
                break
            if self._blocked(value.end, start):
                break
            if stem(word) in cues and (nearest is None or distance < nearest[0]):
                nearest = (distance, 1)
                break
        return nearest

    def _blocked(self, start: int, end: int) -> bool:
        """A clause's punctuation or a number between two places."""
        between = self.text[start:end]
        return bool(re.search(r"[,;.!?()]\s|\d", between))

    def numbers(self, fields: Sequence[_Field], choices: Mapping[str, list[Value]]) -> None:
        """The numbers no word placed, to the number fields in the order they are mentioned;
        with more numbers than fields, only one run of joined numbers of the right length."""
        if not fields:
            return
        numbers = [v for v in self.found.numbers if self.free(v)]
        if len(numbers) > len(fields):
            runs = [run for run in self._runs(numbers) if len(run) == len(fields)]
            if len(runs) != 1:
                return  # which number is which cannot be told: left out, so the tool asks
            numbers = runs[0]
        numbers = self._in_reading_order(numbers)
        for field in fields:
            allowed = {(v.start, v.end) for v in choices[field.name]}
            for value in numbers:
                if (value.start, value.end) in allowed and self.free(value):
                    self.give(field, value)
                    break

    def _runs(self, numbers: Sequence[Value]) -> list[list[Value]]:
        runs: list[list[Value]] = []
        for value in numbers:
            if runs and _JOINER.match(self.text[runs[-1][-1].end : value.start]):
                runs[-1].append(value)
            else:
                runs.append([value])
        return runs

    def _in_reading_order(self, numbers: list[Value]) -> list[Value]:
        """ "subtract 3 from 10" is 10 - 3: the pair after `from` comes first."""
        if len(numbers) == 2:
            first, second = numbers
            joined = self.text[first.end : second.start].strip().lower()
            if joined == "from" and _REVERSED.search(self.text[: first.start]):
                return [second, first]
        return numbers

    def first_free(self, field: _Field, choices: Sequence[Value]) -> None:
        for value in choices:
            if self.free(value):
                self.give(field, value)
                return

    def every_free(self, choices: Sequence[Value]) -> list[Any]:
        """Every value not given to another field, one per place, at most MAX_ITEMS."""
        kept: list[Value] = []
        places = Spans(self.given.values())
        for value in choices:
            if places.overlaps(value):
                continue
            kept.append(value)
            places.add(value)
        return _unique(value.value for value in kept)[:MAX_ITEMS]


def _cues(name: str) -> set[str]:
    """The stems of the words that name a field: its name's words (but stop words) and, for
    `source`/`target` and the like, the words that stand for them."""
    words = [word for word in name_words(name) if not is_stop_word(word) or word in ("from", "to")]
    cues = {stem(word) for word in words}
    for text_word, meanings in _CUE_SYNONYMS.items():
        if meanings & set(words):
            cues.add(text_word)
    return cues if len(name) > 1 else {name}


def _unique(values: Iterable[Any]) -> list[Any]:
    """Texts without repeats (case-insensitive) and without one that is part of an earlier;
    no more than MAX_ITEMS."""
    kept: list[Any] = []
    texts: list[str] = []
    for value in values:
        if len(kept) >= MAX_ITEMS:
            break
        if not isinstance(value, str):  # numbers: "3 and 3" are two
            kept.append(value)
            continue
        lowered = value.lower()
        if any(lowered in earlier for earlier in texts):
            continue
        kept.append(value)
        texts.append(lowered)
    return kept
