"""Extracted values the conversation does not give are dropped, so that the tool asks.

A small model asked for a product's model number in "What warranty do I get on my washing
machine?" fills one in (`KD-300i`, which does not exist, or `KW-620`, the example in the
parameter's description): the round then answers about a product the user never named, where
it should have asked (C24). An extracted string is kept only when the conversation gives it:

- the text names it, case, spacing and punctuation aside (`kw620` names `KW-620`); or
- every content word of it is a word of the text but for its ending (`descaling` in "how do I
  descale it"): a model may inflect what the user wrote; or
- it is a key of one of the pipeline's lookup tables (a known value, which a model may spell
  out in full) and the text points at it: a distinctive part of it, a word with a digit or of
  four letters or more (`720X` of `KW-720X`), is a word of the text.

Everything else is dropped, and the caller says so in the round's trace. Only strings are
checked: a number or a boolean may be a reading of words ("three" is 3), and a value from the
schema's `enum` is one the author allowed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from runner.text.words import stems, token_stems

_WORD = re.compile(r"[^\W_]+")


@dataclass(frozen=True)
class Dropped:
    """An extracted value the conversation does not give."""

    parameter: str
    value: str

    def message(self, tool: str) -> str:
        return (
            f"{tool}: the extracted {self.parameter} {self.value!r} is dropped: it is neither "
            "in the conversation nor a known value the conversation names, so the tool treats "
            "it as not given"
        )


def grounded(
    params: Mapping[str, Any],
    text: str,
    schema: Mapping[str, Any],
    table_key: Callable[[str], str | None],
) -> tuple[dict[str, Any], list[Dropped]]:
    """The parameters with the values the text does not give left out (a list keeps its
    grounded items), and what was dropped. `table_key` spells a value as a lookup table's
    key, or None when no table has it."""
    properties = schema.get("properties")
    properties = properties if isinstance(properties, Mapping) else {}
    words = set(_words(text))
    compact = _compact(text)
    text_stems = token_stems(text)
    kept: dict[str, Any] = {}
    dropped: list[Dropped] = []

    def given(value: str) -> bool:
        return (
            _named(value, compact)
            or _inflected(value, text_stems)
            or _pointed_at(value, words, table_key)
        )

    for name, value in params.items():
        spec = properties.get(name)
        if _chosen_from_list(spec):
            kept[name] = value
        elif isinstance(value, str):
            if given(value):
                kept[name] = value
            else:
                dropped.append(Dropped(name, value))
        elif isinstance(value, list):
            items = [v for v in value if not isinstance(v, str) or given(v)]
            dropped += [Dropped(name, v) for v in value if isinstance(v, str) and v not in items]
            if items or not value:
                kept[name] = items
        else:
            kept[name] = value
    return kept, dropped


def _chosen_from_list(spec: Any) -> bool:
    """A property whose values the schema lists (`enum`, `const`): the author allowed them."""
    if not isinstance(spec, Mapping):
        return False
    items = spec.get("items")
    listed = isinstance(items, Mapping) and ("enum" in items or "const" in items)
    return "enum" in spec or "const" in spec or listed


def _named(value: str, compact_text: str) -> bool:
    needle = _compact(value)
    return bool(needle) and needle in compact_text


def _inflected(value: str, text_stems: set[str]) -> bool:
    wanted = stems(value)
    return bool(wanted) and wanted <= text_stems


def _pointed_at(value: str, words: set[str], table_key: Callable[[str], str | None]) -> bool:
    key = table_key(value)
    if key is None:
        return False
    distinctive = [word for word in _words(key) if _distinctive(word)]
    return any(word in words for word in distinctive)


def _distinctive(word: str) -> bool:
    return any(char.isdigit() for char in word) or len(word) >= 4


def _words(text: str) -> list[str]:
    return [word.casefold() for word in _WORD.findall(text)]


def _compact(text: str) -> str:
    return "".join(_words(text))
