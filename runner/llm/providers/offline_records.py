"""Lookup-style context (records of `key: value; …` fields, as `lookup` tools render table
rows), quoted compactly.

- One record in an answer: its first field (what identifies it) and the fields the question
  names (by a word of the field's name: "price" names `price_eur`); all its fields when the
  question names none.
- Two or more records as the whole context: a comparison. Each record gets one line with its
  identifying field (the first field whose values all differ) and the fields the question names
  — or, when it names none, every field whose values differ; then one line with the fields they
  all share (`In common: …`). Lines end with their citations.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from runner.llm.providers.offline_units import citation_text
from runner.text.words import stem, tokenize

Fields = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Record:
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
    """Records side by side: what tells them apart, then what they share."""
    keys = list(dict.fromkeys(key for record in records for key, _ in record.fields))
    values = [record.values for record in records]
    identity = next((k for k in keys if len({v.get(k) for v in values}) == len(values)), keys[0])
    shared = [k for k in keys if k != identity and _same(values, k)]
    named = [k for k in named_keys(keys, wanted) if k != identity]
    shown = named or [k for k in keys if k != identity and k not in shared]
    lines = [
        _line(
            _fields_text([(k, value[k]) for k in [identity, *shown] if k in value]), record.labels
        )
        for record, value in zip(records, values, strict=True)
    ]
    if shared and not named:
        labels = [label for record in records for label in record.labels]
        lines.append(
            _line(f"In common: {_fields_text([(k, values[0][k]) for k in shared])}", labels)
        )
    return "\n".join(lines)


def _same(values: Sequence[dict[str, str]], key: str) -> bool:
    return all(key in value for value in values) and len({v[key] for v in values}) == 1


def _fields_text(fields: Sequence[tuple[str, str]]) -> str:
    return "; ".join(f"{key}: {value}" for key, value in fields)


def _line(text: str, labels: Sequence[str]) -> str:
    return f"{text} {citation_text(labels)}".rstrip()
