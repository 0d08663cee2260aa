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
checked, wherever they are — a parameter, an item of a list, a field of an object, a field of an
object in a list alike: a number or a boolean may be a reading of words ("three" is 3), and a
value from the schema's `enum` is one the author allowed.

A coordinator's decomposition is its own plan, not the user's words: a subtask's topic or
question is the coordinator's to write (`{topic: kiwis}` for "… about fruit"). With
`plan=True` only the fields the schema marks `user_given: true` (and everything inside one)
are checked; the rest is kept as the coordinator wrote it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
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


USER_GIVEN = "user_given"  # a decompose schema's mark: the field is the user's to give


def grounded(
    params: Mapping[str, Any],
    text: str,
    schema: Mapping[str, Any],
    table_key: Callable[[str], str | None],
    *,
    plan: bool = False,
) -> tuple[dict[str, Any], list[Dropped]]:
    """The parameters with the values the text does not give left out (a list keeps its
    grounded items, an object its grounded fields), and what was dropped. `table_key` spells a
    value as a lookup table's key, or None when no table has it. `plan`: a coordinator's
    decomposition, where only the fields marked `user_given` are checked."""
    words = set(_words(text))
    compact = _compact(text)
    text_stems = token_stems(text)

    def given(value: str) -> bool:
        return (
            _named(value, compact)
            or _inflected(value, text_stems)
            or _pointed_at(value, words, table_key)
        )

    checker = _Checker(given, plan)
    kept = checker.fields(params, schema, "", checked=not plan)
    return kept, checker.dropped


_DROP = object()  # a value left out


@dataclass
class _Checker:
    """Walks a reply beside its schema, dropping the strings the conversation does not give."""

    given: Callable[[str], bool]
    plan: bool
    dropped: list[Dropped] = field(default_factory=list)

    def fields(
        self, values: Mapping[str, Any], spec: Any, path: str, *, checked: bool
    ) -> dict[str, Any]:
        properties = spec.get("properties") if isinstance(spec, Mapping) else None
        properties = properties if isinstance(properties, Mapping) else {}
        kept: dict[str, Any] = {}
        for name, value in values.items():
            where = f"{path}.{name}" if path else str(name)
            result = self.value(value, properties.get(name), where, checked=checked)
            if result is not _DROP:
                kept[name] = result
        return kept

    def value(self, value: Any, spec: Any, where: str, *, checked: bool) -> Any:
        checked = checked or (self.plan and _marked(spec))
        if _chosen_from_list(spec):
            return value
        if isinstance(value, str):
            if not checked or self.given(value):
                return value
            self.dropped.append(Dropped(where, value))
            return _DROP
        if isinstance(value, list):
            items_spec = spec.get("items") if isinstance(spec, Mapping) else None
            # an item is named by its list: "the extracted products 'KW-999'"
            items = [
                item
                for entry in value
                if (item := self.value(entry, items_spec, where, checked=checked)) is not _DROP
            ]
            return items if items or not value else _DROP
        if isinstance(value, Mapping):
            return self.fields(value, spec, where, checked=checked)
        return value


def unmarked(schema: Any) -> Any:
    """The schema without runner's `user_given` marks, as a model is shown it (a property named
    `user_given` is a schema, never a boolean, so it stays)."""
    if isinstance(schema, Mapping):
        return {
            key: unmarked(value)
            for key, value in schema.items()
            if not (key == USER_GIVEN and isinstance(value, bool))
        }
    if isinstance(schema, (list, tuple)):
        return [unmarked(item) for item in schema]
    return schema


def _marked(spec: Any) -> bool:
    return isinstance(spec, Mapping) and spec.get(USER_GIVEN) is True


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
