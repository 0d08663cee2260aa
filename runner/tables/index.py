"""An index of a lookup table's key values, built once per table version.

Scanning every row for every question made a 100,000-row table cost seconds a question. The
index answers the three questions a lookup (and the extraction prompt) asks in time that does
not grow with the table:

- `rows_for(key)`: the rows whose key columns hold `key` (case-insensitive) — a dict lookup;
- `find(text)`: the key values that occur in a text as whole words, longest first — a few dict
  lookups per word of the text, never a pass over the keys;
- `mentioned(text)`: the key values a text names plainly or in a compact spelling (`XR200` or
  `xr 200` for `XR-200`): what an extraction prompt lists when the table is too long to list.

A table may be keyed on several columns (`key: [codename, version]`): a row is found by any of
them, since users name one row in more than one way ("bookworm", "Debian 12").
"""

from __future__ import annotations

import re
import string
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

from runner.documents.table_files import Row, TableVersion, cell_text, shared_rows, table_version
from runner.text.words import tokenize

# Punctuation separates words, as whitespace does; `-`, `.` and `'` only between letters or
# digits join them into one word (`KD-460`, `v2.1`, `don't`), as runner.text.words.tokenize says.
_SEPARATORS = str.maketrans(dict.fromkeys(set(string.punctuation) - set("-.'"), " "))
_JOINERS = frozenset("-.'")
_DOUBLE_JOINER = re.compile(r"[-.']{2}")
# what `mentioned` compares: a key's letters and digits only (`XR-200` -> `xr200`)
_RUN_TOGETHER = str.maketrans(dict.fromkeys(" -.'’", None))
# `mentioned` joins up to this many adjacent words of the text ("xr 200" -> "xr200")
_COMPACT_SPAN = 3
# The version of the rules above and of words_of: an index stored on disk with another one is
# rebuilt (runner.tables.store). Raise it with any change to how keys are compared.
NORMALISATION = 1


def words_of(text: str) -> list[str]:
    """The words a key or a text is compared by: runner.text.words.tokenize's, case-folded. Written
    out for ASCII text, which is most keys: a million of them are indexed in a second or two."""
    folded = text.casefold()
    if not folded.isascii() or _DOUBLE_JOINER.search(folded):
        return tokenize(folded)
    words = folded.translate(_SEPARATORS).split()
    if _JOINERS.isdisjoint(folded):
        return words
    cleaned = []
    for word in words:
        word = word.strip("-.'")
        if word.endswith("'s"):  # a possessive: "KD-460's" is about KD-460
            word = word[:-2]
        if word:
            cleaned.append(word)
    return cleaned


def compact_spelling(joined: str) -> str | None:
    """A key with more than letters and digits (its words joined by spaces), run together
    (`xr200` for `xr-200`); None for a key of letters and digits alone."""
    return None if joined.isalnum() else joined.translate(_RUN_TOGETHER)


class Hit(NamedTuple):
    """A key found by its words: its place in table order, its spelling, its rows' numbers."""

    order: int
    spelling: str
    rows: tuple[int, ...]


class KeyMatcher(ABC):
    """The matching rules, written once over four look-ups a store provides (`_hits`,
    `_compact_hits`, `_rows`, and the `keys`/`word_counts` it knows): the index in memory
    (KeyIndex) and the one on disk (runner.tables.store) answer alike because of it."""

    columns: tuple[str, ...]  # the key columns
    table_columns: tuple[str, ...]  # the columns of the table's first row
    keys: Sequence[str]  # every key value as written, in table order, each once
    word_counts: Sequence[int]  # how many words the keys have, most first

    @abstractmethod
    def _hits(self, joined: Iterable[str]) -> dict[str, Hit]:
        """The keys whose words, joined by spaces, are one of `joined`."""
        raise NotImplementedError

    @abstractmethod
    def _compact_hits(self, runs: Iterable[str]) -> dict[str, Hit]:
        """The first key (in table order) with more than letters and digits whose words run
        together (`xr200` for `XR-200`) are one of `runs`."""
        raise NotImplementedError

    @abstractmethod
    def _rows(self, numbers: Sequence[int]) -> list[Row]:
        """The rows with these numbers, as fresh dicts, in that order."""
        raise NotImplementedError

    def spelling(self, key: str) -> str | None:
        """The key as the table writes it (`KD-460` for `kd-460`), or None if it has no row."""
        joined = " ".join(words_of(key))
        hit = self._hits([joined]).get(joined)
        return None if hit is None else hit.spelling

    def rows_for(self, *keys: str) -> list[Row]:
        """The rows one of whose key columns holds one of `keys` (compared by their words, so
        case and spacing do not matter), each once, in the order of the keys, as fresh dicts."""
        wanted = [" ".join(words_of(key)) for key in keys]
        hits = self._hits(wanted)
        numbers: dict[int, None] = {}
        for joined in wanted:
            if joined in hits:
                numbers.update(dict.fromkeys(hits[joined].rows))
        return self._rows(list(numbers))

    def find(self, text: str) -> list[str]:
        """Key values that occur in `text` as whole words, longest first; a word already claimed
        by a longer key is not matched again. In order of appearance."""
        words = words_of(text)
        spans = [
            (start, count, " ".join(words[start : start + count]))
            for start in range(len(words))
            for count in self.word_counts
            if start + count <= len(words)
        ]
        hits = self._hits({joined for _, _, joined in spans})
        matches = []
        for start, count, joined in spans:
            hit = hits.get(joined)
            if hit is not None:
                matches.append((-count, -len(hit.spelling), hit.order, start, hit.spelling))
        claimed: set[int] = set()
        found: dict[int, str] = {}
        for negative_count, _, _, start, key in sorted(matches):
            span = set(range(start, start - negative_count))
            if not span & claimed:
                claimed |= span
                found.setdefault(start, key)
        return list(dict.fromkeys(found[start] for start in sorted(found)))

    def mentioned(self, text: str, limit: int) -> list[str]:
        """At most `limit` key values the text names: as whole words first, then run together
        (`XR200` or `xr 200` for `XR-200`)."""
        found = dict.fromkeys(self.find(text))
        words = words_of(text)
        runs = [
            [
                "".join(words[start:end]).translate(_RUN_TOGETHER)
                for end in range(start + 1, min(start + _COMPACT_SPAN, len(words)) + 1)
            ]
            for start in range(len(words))
        ]
        every_run = {run for runs_at in runs for run in runs_at}
        plain, compact = self._hits(every_run), self._compact_hits(every_run)
        for runs_at in runs:
            for run in runs_at:
                for hit in (plain.get(run), compact.get(run)):
                    if hit is not None:
                        found.setdefault(hit.spelling)
            if len(found) >= limit:
                break
        return list(found)[:limit]


class KeyIndex(KeyMatcher):
    """The index in memory, built with few container objects per key (strings and ints), so
    that a million keys cost the garbage collector nothing and the index stays a few hundred
    bytes a key."""

    def __init__(self, rows: Sequence[Row], columns: Sequence[str]) -> None:
        self.rows = rows
        self.columns = tuple(columns)
        self.table_columns = tuple(rows[0]) if rows else ()
        self.keys: list[str] = []
        self.order: dict[str, int] = {}  # a key's words, joined by spaces -> its place in keys
        self._compact: dict[str, int] | None = None  # words run together -> place (see mentioned)
        self._rows_of: list[int | tuple[int, ...]] = []  # per key: its row number(s)
        self._word_counts: set[int] = set()
        for column in self.columns:
            self._add_column(rows, column)
        self.word_counts = sorted(self._word_counts, reverse=True)

    def _add_column(self, rows: Sequence[Row], column: str) -> None:
        # One tight loop: this runs a million times for a million-row table.
        order_of, keys, rows_of = self.order, self.keys, self._rows_of
        counts = self._word_counts
        for number, row in enumerate(rows):
            value = row.get(column)
            key = value.strip() if isinstance(value, str) else cell_text(value)
            if not key:
                continue
            folded = key.casefold()
            if folded.isalnum():  # one word, the common case
                joined, count = folded, 1
            else:
                words = words_of(folded)
                if not words:
                    continue
                joined, count = " ".join(words), len(words)
            order = order_of.get(joined)
            if order is None:
                order_of[joined] = len(keys)
                keys.append(key)
                rows_of.append(number)
                counts.add(count)
                continue
            present = rows_of[order]
            numbers = present if isinstance(present, tuple) else (present,)
            if number not in numbers:
                rows_of[order] = (*numbers, number)

    def row_numbers(self, order: int) -> tuple[int, ...]:
        present = self._rows_of[order]
        return present if isinstance(present, tuple) else (present,)

    def _hit(self, order: int) -> Hit:
        return Hit(order, self.keys[order], self.row_numbers(order))

    def _hits(self, joined: Iterable[str]) -> dict[str, Hit]:
        order_of = self.order
        return {words: self._hit(order_of[words]) for words in joined if words in order_of}

    def compact_spellings(self) -> dict[str, int]:
        """Keys with more than letters and digits, run together (`xr200` for `XR-200`): built on
        the first `mentioned`, which only a table too long to list whole needs."""
        if self._compact is None:
            self._compact = {}
            for joined, order in self.order.items():
                compact = compact_spelling(joined)
                if compact is not None:
                    self._compact.setdefault(compact, order)
        return self._compact

    def _compact_hits(self, runs: Iterable[str]) -> dict[str, Hit]:
        compact = self.compact_spellings()
        return {run: self._hit(compact[run]) for run in runs if run in compact}

    def _rows(self, numbers: Sequence[int]) -> list[Row]:
        return [dict(self.rows[number]) for number in numbers]


def key_index(table: Path, columns: Sequence[str]) -> KeyIndex:
    """The index of a table's key columns; built once per version of the file (its rows are
    parsed once too, by runner.documents.table_files). Raises TableError."""
    return _index(table_version(table), tuple(columns))


@lru_cache(maxsize=32)
def _index(version: TableVersion, columns: tuple[str, ...]) -> KeyIndex:
    return KeyIndex(shared_rows(version), columns)
