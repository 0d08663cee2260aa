"""The values a text gives, each with its place: what offline extraction chooses from.

A value is read whole by its shape before anything splits it into words: a URL, an e-mail
address, a time zone (`Area/City`, `UTC+2`), a path (`/var/log/app.log`, `~/notes`, `C:\\temp`,
`src/main.py`) and a file name (`report-2024.pdf`). Then quoted phrases, model-number-like
tokens (`XR-200`), runs of capitalised words (`Northwind Kettle`, not a sentence's first word on
its own) and numbers (`3`, `-2.5`, `1,000`), none of them inside a value already read. The
pipeline's lookup-table values (`known_values`) are found wherever the text names them, in
their own spelling (`xr200` names `XR-200`).

Each value keeps its span, so that one place in the text is never given to two parameters.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

from runner.text.words import is_stop_word, word_spans

# kinds of value, by shape
URL = "url"
EMAIL = "email"
ZONE = "zone"
PATH = "path"  # a path by its shape alone: absolute, home-relative, dotted, or with a file
SLASHED = "slashed"  # `a/b`: a path only where a path is asked for (else it is `and/or`)
FILE = "file"
QUOTED = "quoted"
KNOWN = "known"
MODEL = "model"
NAME = "name"
NUMBER = "number"

_TRAILING = ".,;:!?)]}'\"”’"
_URL = re.compile(r"\b(?:https?|ftp)://[^\s<>\"'“”]+|\bwww\.[^\s<>\"'“”]+", re.IGNORECASE)
_EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+")
_AREAS = "Africa|America|Antarctica|Arctic|Asia|Atlantic|Australia|Europe|Indian|Pacific|Etc"
_ZONE = re.compile(
    rf"(?<![\w/])(?:(?:{_AREAS})/[A-Za-z][\w+\-]*(?:/[A-Za-z][\w+\-]*)?"
    r"|(?:UTC|GMT)(?:[+-]\d{1,2}(?::?\d{2})?)?)(?![\w/])"
)
_SEGMENT = r"[\w.\-~@%+]+"
_PATH = re.compile(
    rf"(?<![\w/.])(?:~|\.{{1,2}})?/{_SEGMENT}(?:/{_SEGMENT})*/?"  # /etc/hosts, ~/x, ./a, ../b
    r"|(?<![\w])[A-Za-z]:\\[^\s\"'“”<>|]*"  # C:\Users\me
    rf"|(?<![\w/.~]){_SEGMENT}(?:/{_SEGMENT})+/?"  # src/main.py, data/reports
)
_EXTENSION = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,5}$")
_FILE = re.compile(r"(?<![\w/.\\-])[\w\-]+(?:\.[\w\-]+)*\.[A-Za-z][A-Za-z0-9]{0,5}(?![\w/\\-])")
_QUOTED = re.compile(r"\"([^\"]{1,120})\"|“([^”]{1,120})”|(?<!\w)'([^']{1,120})'(?!\w)")
_NUMBER = re.compile(r"(?<![\w.\-/])[-−]?\d+(?:[.,]\d+)*(?![\w\-/])")
_THOUSANDS = re.compile(r"^-?\d{1,3}(?:,\d{3})+$")


@dataclass(frozen=True)
class Value:
    """A value the text gives, where it gives it, and what shape it has."""

    start: int
    end: int
    value: str | int | float
    kind: str
    listed_as: str = ""  # a known value: the name its table lists it under

    def overlaps(self, other: Value) -> bool:
        return self.start < other.end and other.start < self.end


class Spans:
    """Places in a text, kept sorted and merged: whether a span touches one is a bisection,
    so a long message costs no more than its values (not their square)."""

    def __init__(self, values: Iterable[Value] = ()) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []
        for value in sorted(values, key=lambda v: v.start):
            self.add(value)

    def overlaps(self, value: Value) -> bool:
        index = bisect_right(self.starts, value.start)
        if index and self.ends[index - 1] > value.start:
            return True
        return index < len(self.starts) and self.starts[index] < value.end

    def add(self, value: Value) -> None:
        index = bisect_left(self.starts, value.start)
        if index and self.ends[index - 1] >= value.start:  # touches the one before: merge
            self.ends[index - 1] = max(self.ends[index - 1], value.end)
            return
        self.starts.insert(index, value.start)
        self.ends.insert(index, value.end)


class TextValues:
    """Every value of one text, found once."""

    def __init__(self, text: str, known: dict[str, list[str]]) -> None:
        self.text = text
        self.lower = text.lower()
        self.known = known

    @cached_property
    def shaped(self) -> list[Value]:
        """URLs, e-mail addresses, time zones, paths and file names, read whole: a later shape
        never takes part of an earlier one (`Europe/Paris` is a zone, not a path)."""
        found: list[Value] = []
        taken = Spans()
        for kind, pattern in ((URL, _URL), (EMAIL, _EMAIL), (ZONE, _ZONE), (PATH, _PATH)):
            for match in pattern.finditer(self.text):
                value = _trimmed(self.text, match.start(), match.end(), kind)
                if value is not None and not taken.overlaps(value):
                    found.append(value)
                    taken.add(value)
        for match in _FILE.finditer(self.text):
            value = _file(self.text, match.start(), match.end())
            if value is not None and not taken.overlaps(value):
                found.append(value)
                taken.add(value)
        return sorted(found, key=lambda v: v.start)

    @cached_property
    def quoted(self) -> list[Value]:
        found = []
        for match in _QUOTED.finditer(self.text):
            group = next(i for i, g in enumerate(match.groups(), 1) if g)
            inner = match.group(group)
            start = match.start(group) + len(inner) - len(inner.lstrip())
            found.append(Value(start, start + len(inner.strip()), inner.strip(), QUOTED))
        return found

    @cached_property
    def names(self) -> list[Value]:
        """Model-number-like tokens and runs of capitalised words, in text order, outside
        shaped values and quotes."""
        taken = self._shaped_or_quoted
        found: list[Value] = []
        run: list[tuple[int, int, str]] = []
        previous_end = 0
        for start, end, word in word_spans(self.text):
            inside = taken.overlaps(Value(start, start + 1, "", ""))
            if inside or self.text[previous_end:start].strip():  # a gap or punctuation
                run = self._close(run, found)
            previous_end = end
            if inside:
                continue
            if _model_number(word):
                run = self._close(run, found)
                found.append(Value(start, end, word, MODEL))
            elif word[:1].isupper() and not is_stop_word(word):
                run.append((start, end, word))
            else:
                run = self._close(run, found)
        self._close(run, found)
        return found

    @cached_property
    def _shaped_or_quoted(self) -> Spans:
        return Spans([*self.shaped, *self.quoted])

    def _close(
        self, run: list[tuple[int, int, str]], found: list[Value]
    ) -> list[tuple[int, int, str]]:
        if run and _starts_sentence(self.text, run[0][0]) and not run[0][2].isupper():
            run = run[1:]  # "Compare the …": a sentence's first word is capitalised anyway
        if run:
            words = " ".join(word for _, _, word in run)
            found.append(Value(run[0][0], run[-1][1], words, NAME))
        return []

    @cached_property
    def numbers(self) -> list[Value]:
        """Numbers outside every other value (`KD-450`, `v2.1`, a path's digits are not)."""
        found = []
        for match in _NUMBER.finditer(self.text):
            value = Value(match.start(), match.end(), _number(match.group(0)), NUMBER)
            if not self._shaped_or_quoted.overlaps(value):
                found.append(value)
        return found

    def known_values(self, name: str | None = None) -> list[Value]:
        """The known values the text names (those listed under `name` only, when given), at
        their first whole-word place."""
        found = []
        for listed, values in self.known.items():
            if name is not None and listed != name:
                continue
            for known in values:
                place = self._place_of(known)
                if place is not None:
                    found.append(Value(place[0], place[1], known, KNOWN, listed))
        return sorted(found, key=lambda v: v.start)

    def _place_of(self, value: str) -> tuple[int, int] | None:
        needle = value.strip().lower()
        if not needle:
            return None
        start = self.lower.find(needle)
        while start >= 0:  # a whole-word occurrence: no letter or digit right before or after
            end = start + len(needle)
            if not _word_char(self.lower, start - 1) and not _word_char(self.lower, end):
                return start, end
            start = self.lower.find(needle, start + 1)
        compact = _compact(needle)  # "XR200" or "xr 200" for "XR-200"
        if any(ch.isdigit() for ch in compact):
            return self._compact_tokens.get(compact)
        return None

    @cached_property
    def _compact_tokens(self) -> dict[str, tuple[int, int]]:
        """Compact forms of single tokens and of adjacent pairs ("XR 200" -> "xr200")."""
        spans = [m.span() for m in re.finditer(r"[^\W_]+(?:[-.][^\W_]+)*", self.text)]
        forms: dict[str, tuple[int, int]] = {}
        for index, (start, end) in enumerate(spans):
            forms.setdefault(_compact(self.text[start:end]), (start, end))
            if index + 1 < len(spans):
                after = spans[index + 1]
                pair = self.text[start:end] + self.text[after[0] : after[1]]
                forms.setdefault(_compact(pair), (start, after[1]))
        return forms


def _starts_sentence(text: str, position: int) -> bool:
    """Whether a word at `position` starts the text, a line or a sentence (after `.!?:;` and a
    space): read backwards over the spaces only, however long the text."""
    index = position
    while index > 0 and text[index - 1].isspace():
        if text[index - 1] == "\n":
            return True
        index -= 1
    return index == 0 or (index < position and text[index - 1] in ".!?:;")


def _trimmed(text: str, start: int, end: int, kind: str) -> Value | None:
    """A shaped match without the sentence's punctuation after it; a relative `a/b` is a path
    by its shape only with a file at its end (`src/main.py`), else SLASHED."""
    while end > start and text[end - 1] in _TRAILING:
        end -= 1
    value = text[start:end]
    if not value:
        return None
    if kind == PATH and value[0] not in "/~." and not re.match(r"[A-Za-z]:\\", value):
        if value.strip("/").count("/") == 0:
            return None
        kind = PATH if _EXTENSION.search(value) else SLASHED
    return Value(start, end, value, kind)


def _file(text: str, start: int, end: int) -> Value | None:
    """A file name: a name and an extension with a letter in it, neither a number (`3.5`) nor
    an abbreviation (`e.g.`)."""
    while end > start and text[end - 1] in _TRAILING:
        end -= 1
    value = text[start:end]
    base, _, extension = value.rpartition(".")
    if not base or not any(ch.isalpha() for ch in extension):
        return None
    if len(base) < 2 and len(extension) < 2:
        return None
    return Value(start, end, value, FILE)


def _number(written: str) -> int | float:
    """`3`, `-2.5`, `1,5` (a decimal comma), `1,000` and `1.000.000` (thousands)."""
    written = written.replace("−", "-")
    if _THOUSANDS.match(written) or _THOUSANDS.match(written.replace(".", ",")):
        return int(re.sub(r"[.,]", "", written))
    first = re.match(r"-?\d+(?:[.,]\d+)?", written)
    number = float(first.group(0).replace(",", ".")) if first else 0.0
    return int(number) if number.is_integer() else number


def _word_char(text: str, index: int) -> bool:
    return 0 <= index < len(text) and (text[index].isalnum() or text[index] == "_")


def _model_number(word: str) -> bool:
    return any(ch.isdigit() for ch in word) and any(ch.isalpha() for ch in word)


def _compact(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isalnum())
