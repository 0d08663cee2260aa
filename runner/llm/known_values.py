"""The values of a pipeline's lookup tables, handed to extraction as `known_values`, and those
the text names as `named_values`.

`{<name>: [values]}` per lookup tool, where the name is the tool's `parameter` (with
`match: params`) or else its `key` column: the values a user may name. A real model sees them in
the prompt; the offline provider looks for them in the text. Tables are read through
documents.table_files (parsed once per file version); a table that cannot be read is left out here,
since the lookup tool itself reports it with the fix.

A name lists at most MAX_LISTED values: a table of 100,000 keys listed whole made one extraction
cost ~400k prompt tokens. A longer table lists the values the text names (found through the
table's key index, plainly or in a compact spelling such as `XR200` for `XR-200`).
"""

from __future__ import annotations

from collections.abc import Sequence

from runner.config.model import LookupOptions, Pipeline
from runner.documents.table_files import TableError
from runner.tables.store import table_keys

MAX_LISTED = 200


def known_values(pipeline: Pipeline | None, text: str = "") -> dict[str, list[str]]:
    """`{name: [values]}`: all of a short table's values, the ones the text names of a long
    table's."""
    return known_and_named(pipeline, text)[0]


def named_values(pipeline: Pipeline | None, text: str) -> dict[str, list[str]]:
    """`{name: [values]}`: the tables' values the text names, whatever the table's length. A
    small model given these few instead of a long list fills its reply with them; a large one
    loses nothing, since `known_values` still lists every value when the text names none."""
    return known_and_named(pipeline, text)[1]


def known_and_named(
    pipeline: Pipeline | None, text: str
) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """`known_values` and `named_values` of one text, each table's key index opened and searched
    for the text once for both (an extraction's prompt has both)."""
    known: dict[str, list[str]] = {}
    named: dict[str, list[str]] = {}
    if pipeline is None:
        return known, named
    for tool in pipeline.tools:
        options = tool.options
        if not isinstance(options, LookupOptions):
            continue
        name = options.parameter if options.match == "params" and options.parameter else options.key
        listed, mentioned = _key_values(pipeline, options, text)
        _merge(known.setdefault(name, []), listed)
        _merge(named.setdefault(name, []), mentioned)
    return _nonempty(known), _nonempty(named)


def _key_values(
    pipeline: Pipeline, options: LookupOptions, text: str
) -> tuple[Sequence[str], Sequence[str]]:
    """The table's values to list (all of a short table's, else the named ones) and those the
    text names."""
    try:
        index = table_keys(pipeline, options)
    except (TableError, OSError):
        return [], []
    mentioned = index.mentioned(text, MAX_LISTED) if text else []
    return (index.keys if len(index.keys) <= MAX_LISTED else mentioned), mentioned


def _merge(merged: list[str], values: Sequence[str]) -> None:
    if not merged:  # the common case, one table a name: its values are unrepeated already
        merged.extend(values[:MAX_LISTED])
        return
    seen = set(merged)  # a table's values after another table's of the same name, unrepeated
    for value in values:
        if len(merged) >= MAX_LISTED:
            return
        if value not in seen:
            seen.add(value)
            merged.append(value)


def _nonempty(values: dict[str, list[str]]) -> dict[str, list[str]]:
    return {name: listed for name, listed in values.items() if listed}


def table_key(pipeline: Pipeline | None, value: str) -> str | None:
    """`value` as some lookup table of the pipeline writes it among its keys (`KD-460` for
    `kd-460`); None when no table has it."""
    if pipeline is None:
        return None
    for tool in pipeline.tools:
        if not isinstance(tool.options, LookupOptions):
            continue
        try:
            spelling = table_keys(pipeline, tool.options).spelling(value)
        except (TableError, OSError):
            continue
        if spelling is not None:
            return spelling
    return None
