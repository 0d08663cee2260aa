"""A table row as stored text (runner.tables.store), and back, the very same values.

A CSV row (text cells under the header's columns) is a JSON list of its cells. A YAML or JSON row
may hold what JSON has no form for, dates and times, and rows with other columns than the first
row's: it is written with every mapping, date and time tagged (`{"~mapping": [[key, value], …]}`,
`{"~date": "2023-06-10"}`), so that no value the table holds is read back as another.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import date, datetime
from typing import Any

from runner.documents.table_files import Row

_MAPPING, _DATE, _DATETIME = "~mapping", "~date", "~datetime"


def encode_row(row: Row, header: Sequence[str]) -> str:
    values = list(row.values())
    if tuple(row) == tuple(header) and all(type(v) is str or v is None for v in values):
        return json.dumps(values, ensure_ascii=False)  # a CSV row: nothing to tag
    return json.dumps(_tagged(row))


def decode_row(text: str, header: Sequence[str]) -> Row:
    value = json.loads(text, object_hook=_untagged)
    return dict(zip(header, value, strict=True)) if isinstance(value, list) else value


def _tagged(value: Any) -> Any:
    if isinstance(value, datetime):  # before date: a datetime is a date too
        return {_DATETIME: value.isoformat()}
    if isinstance(value, date):
        return {_DATE: value.isoformat()}
    if isinstance(value, dict):
        return {_MAPPING: [[key, _tagged(item)] for key, item in value.items()]}
    if isinstance(value, list):
        return [_tagged(item) for item in value]
    return value


def _untagged(tagged: dict[str, Any]) -> Any:
    ((tag, value),) = tagged.items()  # every object in a stored row is a tag
    if tag == _DATETIME:
        return datetime.fromisoformat(value)
    if tag == _DATE:
        return date.fromisoformat(value)
    return dict(value)
