"""Offline extraction: fill a JSON Schema's fields from the task text, without a model.

What counts as a value, in order of trust:
1. values of the pipeline's lookup tables (`known_values`) found in the text — those listed under
   the field's own name (or its singular/plural) first, then any other table's;
2. quoted phrases ("…", '…', “…”);
3. names: model-number-like tokens (letters and digits, dashes allowed: `XR-200`, `A320`) and
   runs of capitalised words (`Northwind Kettle`), but not a sentence's first word on its own;
4. numbers, for `number` and `integer` fields;
5. for an `enum`, the allowed values that occur in the text.
An array field collects every match (an empty list when there is none); a scalar field takes the
first and is left out when nothing fits. Booleans and nested objects are left out: guessing them
would be inventing facts.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from runner.text.words import is_stop_word, stem, tokenize, word_spans

_QUOTED = re.compile(r"\"([^\"]{1,120})\"|“([^”]{1,120})”|(?<!\w)'([^']{1,120})'(?!\w)")
_NUMBER = re.compile(r"(?<![\w.\-])-?\d+(?:[.,]\d+)?(?![\w\-])")
_SENTENCE_START = re.compile(r"(?:^|[.!?:;]\s+|\n\s*)$")


def extract(text: str, schema: Mapping[str, Any], known_values: Any) -> dict[str, Any]:
    finder = _Finder(text, _known_lists(known_values))
    result: dict[str, Any] = {}
    for name, field in (schema.get("properties") or {}).items():
        value = finder.value(name, field if isinstance(field, Mapping) else {})
        if value is not None:
            result[name] = value
    return result


def _known_lists(known_values: Any) -> dict[str, list[str]]:
    """known_values is `{name: [values]}`; a bare list is accepted as values of no name."""
    if isinstance(known_values, Mapping):
        return {str(k): [str(v) for v in vs or ()] for k, vs in known_values.items()}
    if isinstance(known_values, Iterable) and not isinstance(known_values, str):
        return {"": [str(v) for v in known_values]}
    return {}


def _types(field: Mapping[str, Any]) -> set[str]:
    declared = field.get("type", "string")
    return set(declared) if isinstance(declared, list) else {declared}


class _Finder:
    def __init__(self, text: str, known: dict[str, list[str]]) -> None:
        self.text = text
        self.lower = text.lower()
        self.compact_tokens = _compact_tokens(text)
        self.known = known

    def value(self, name: str, field: Mapping[str, Any]) -> Any:
        types = _types(field)
        if "array" in types:
            items = field.get("items") if isinstance(field.get("items"), Mapping) else {}
            return self.values(name, items)
        found = self.values(name, field)
        return found[0] if found else None

    def values(self, name: str, field: Mapping[str, Any]) -> list[Any]:
        types = _types(field)
        if "enum" in field:
            return self.enum_values(field["enum"])
        if types & {"integer", "number"} and "string" not in types:
            return self.numbers(integer="integer" in types and "number" not in types)
        if "string" in types:
            return self.strings(name)
        return []

    def strings(self, name: str) -> list[str]:
        own = self.known_in_text(self._lists_for(name))
        if own:
            return own
        others = self.known_in_text(list(self.known.values()))
        in_text_order = sorted([*self.quoted(), *self.names()])
        return _unique([*others, *(value for _, value in in_text_order)])

    def _lists_for(self, name: str) -> list[list[str]]:
        wanted = stem(name)
        return [values for key, values in self.known.items() if key and stem(key) == wanted]

    def known_in_text(self, lists: list[list[str]]) -> list[str]:
        found: list[tuple[int, str]] = []
        for values in lists:
            for value in values:
                position = self._position(value)
                if position is not None:
                    found.append((position, value))
        return _unique(value for _, value in sorted(found))

    def _position(self, value: str) -> int | None:
        needle = value.strip().lower()
        if not needle:
            return None
        start = self.lower.find(needle)
        while start >= 0:  # a whole-word occurrence: no letter or digit right before or after
            end = start + len(needle)
            if not _word_char(self.lower, start - 1) and not _word_char(self.lower, end):
                return start
            start = self.lower.find(needle, start + 1)
        # "XR200" or "xr 200" for "XR-200": compare letters and digits only
        compact = _compact(needle)
        if any(ch.isdigit() for ch in compact):
            return self.compact_tokens.get(compact)
        return None

    def quoted(self) -> list[tuple[int, str]]:
        return [
            (m.start(), next(g for g in m.groups() if g).strip())
            for m in _QUOTED.finditer(self.text)
        ]

    def names(self) -> list[tuple[int, str]]:
        """Model-number-like tokens and runs of capitalised words, in text order."""
        found: list[tuple[int, str]] = []
        run: list[tuple[int, str]] = []
        previous_end = 0
        for start, end, word in word_spans(self.text):
            if self.text[previous_end:start].strip():  # punctuation between: a run ends
                run = self._close(run, found)
            previous_end = end
            if _model_number(word):
                run = self._close(run, found)
                found.append((start, word))
            elif word[:1].isupper() and not is_stop_word(word):
                run.append((start, word))
            else:
                run = self._close(run, found)
        self._close(run, found)
        return found

    def _close(
        self, run: list[tuple[int, str]], found: list[tuple[int, str]]
    ) -> list[tuple[int, str]]:
        if run and self._at_sentence_start(run[0][0]) and not run[0][1].isupper():
            run = run[1:]  # "Compare the …": a sentence's first word is capitalised anyway
        if run:
            found.append((run[0][0], " ".join(word for _, word in run)))
        return []

    def _at_sentence_start(self, position: int) -> bool:
        return bool(_SENTENCE_START.search(self.text[:position]))

    def numbers(self, *, integer: bool) -> list[float | int]:
        values: list[float | int] = []
        for match in _NUMBER.finditer(self.text):
            number = float(match.group(0).replace(",", "."))
            if integer and not number.is_integer():
                continue
            values.append(int(number) if integer or number.is_integer() else number)
        return values

    def enum_values(self, allowed: list[Any]) -> list[Any]:
        present = {stem(token) for token in tokenize(self.text)}
        found = []
        for value in allowed:
            value_stems = {stem(token) for token in tokenize(str(value))}
            if value_stems and value_stems <= present:
                found.append(value)
        return found


def _word_char(text: str, index: int) -> bool:
    return 0 <= index < len(text) and (text[index].isalnum() or text[index] == "_")


def _model_number(word: str) -> bool:
    return any(ch.isdigit() for ch in word) and any(ch.isalpha() for ch in word)


def _compact(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isalnum())


def _compact_tokens(text: str) -> dict[str, int]:
    """Compact forms of single tokens and of adjacent pairs ("XR 200" -> "xr200"), by position."""
    spans = [(m.start(), m.group(0)) for m in re.finditer(r"[^\W_]+(?:[-.][^\W_]+)*", text)]
    forms: dict[str, int] = {}
    for index, (start, token) in enumerate(spans):
        forms.setdefault(_compact(token), start)
        if index + 1 < len(spans):
            forms.setdefault(_compact(token + spans[index + 1][1]), start)
    return forms


def _unique(values: Iterable[str]) -> list[str]:
    """Without repeats (case-insensitive), and without a value that is part of an earlier one."""
    kept: list[str] = []
    for value in values:
        lowered = value.lower()
        if any(lowered == k.lower() or lowered in k.lower() for k in kept):
            continue
        kept.append(value)
    return kept
