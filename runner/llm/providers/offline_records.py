"""Lookup-style context (records of `key: value; …` fields, as `lookup` tools render table
rows), quoted compactly.

- One record in an answer: its first field (what identifies it) and the fields the question
  names (by a word of the field's name: "price" names `price_eur`); all its fields when the
  question names none.
- Two or more records as the whole context: a comparison, field by field. The records are named
  by their identifying field (the first field whose values all differ). Each field the question
  names — or, when it names none, each field whose values differ — gets one line with every
  record's value (`price_eur — KD-450: 549; KD-600X: 899`), and when those values (of a few words
  each) share words, the words they share (`both: commit, branch`; `all:` for more than two).
  Then one line with the fields they all share (`In common: …`), or `In common: no field has
  the same value.` Every line cites all the records compared. Table rows a comparing question
  chose are compared the same way (`offline_selection`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from runner.llm.citations import citation_text
from runner.text.words import content_words, stem, tokenize

Fields = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Record:
    """A record of the context (`key: value; …`, a lookup tool's table row): its fields."""

    fields: Fields
    labels: tuple[str, ...] = ()  # citation labels: `doc p. N`

    @property
    def values(self) -> dict[str, str]:
        return dict(self.fields)


def key_stems(key: str) -> set[str]:
    """The stems of a field name's words (`price_eur` -> price, eur)."""
    return {stem(word) for word in tokenize(key.replace("_", " "))}


def named_keys(keys: Sequence[str], wanted: Collection[str]) -> list[str]:
    """The keys a word of the question names, in key order."""
    return [key for key in keys if key_stems(key) & set(wanted)]


def compact_record(fields: Fields, wanted: Collection[str]) -> str:
    """The first field and the fields the question names; every field when it names none."""
    if not fields:
        return ""
    named = named_keys([key for key, _ in fields[1:]], wanted)
    shown = [fields[0], *((key, value) for key, value in fields[1:] if key in named)]
    return _fields_text(shown if named else fields)


def comparison(records: Sequence[Record], wanted: Collection[str]) -> str:
    """Records compared field by field: what differs, record by record, then what they share."""
    keys = list(dict.fromkeys(key for record in records for key, _ in record.fields))
    values = [record.values for record in records]
    identity = next((k for k in keys if len({v.get(k) for v in values}) == len(values)), keys[0])
    names = [value.get(identity, "?") for value in values]
    named = [k for k in named_keys(keys, wanted) if k != identity]
    compared = named or [k for k in keys if k != identity]
    shared = [k for k in compared if _same(values, k)]
    labels = [label for record in records for label in record.labels]
    lines = [
        _line(_difference(key, names, [value.get(key, "") for value in values]), labels)
        for key in compared
        if key not in shared
    ]
    if shared:
        lines.append(
            _line(f"In common: {_fields_text([(k, values[0][k]) for k in shared])}", labels)
        )
    elif not named:
        lines.append(_line("In common: no field has the same value.", labels))
    return "\n".join(lines)


def _difference(key: str, names: Sequence[str], values: Sequence[str]) -> str:
    """`key — A: value; B: value`, and the words the values share when each is a phrase."""
    text = f"{key} — " + "; ".join(
        f"{name}: {value or '(none)'}" for name, value in zip(names, values, strict=True)
    )
    common = _shared_words(values)
    every = "both" if len(values) == 2 else "all"
    return f"{text} ({every}: {', '.join(common)})" if common else text


SHARED_WORDS_MIN = 3  # values of at least this many words are phrases whose shared words count


def _shared_words(values: Sequence[str]) -> list[str]:
    """The content words every value holds (by stem, in the first value's form and order), when
    every value is a phrase: a number or a code shares nothing worth saying."""
    if any(len(value.split()) < SHARED_WORDS_MIN for value in values):
        return []
    common = set.intersection(*({stem(word) for word in content_words(v)} for v in values))
    first = content_words(values[0])
    return list(dict.fromkeys(word for word in first if stem(word) in common))


def _same(values: Sequence[dict[str, str]], key: str) -> bool:
    return all(key in value for value in values) and len({v[key] for v in values}) == 1


def _fields_text(fields: Sequence[tuple[str, str]]) -> str:
    return "; ".join(f"{key}: {value}" for key, value in fields)


def _line(text: str, labels: Sequence[str]) -> str:
    return f"{text} {citation_text(labels)}".rstrip()
