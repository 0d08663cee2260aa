"""The values of a pipeline's lookup tables, handed to extraction as `known_values`.

`{<name>: [values]}` per lookup tool, where the name is the tool's `parameter` (with
`match: params`) or else its `key` column: the values a user may name. A real model sees them in
the prompt; the offline provider looks for them in the text. Tables are read through
runner.tables (parsed once per file version); a table that cannot be read is left out here,
since the lookup tool itself reports it with the fix.
"""

from __future__ import annotations

from runner.config.model import LookupOptions, Pipeline
from runner.tables import TableError, cell_text, load_table, table_path


def known_values(pipeline: Pipeline | None) -> dict[str, list[str]]:
    result: dict[str, list[str]] = {}
    if pipeline is None:
        return result
    for tool in pipeline.tools:
        options = tool.options
        if not isinstance(options, LookupOptions):
            continue
        name = options.parameter if options.match == "params" and options.parameter else options.key
        merged = result.setdefault(name, [])
        for value in _key_values(pipeline, options):
            if value not in merged:
                merged.append(value)
    return {name: values for name, values in result.items() if values}


def _key_values(pipeline: Pipeline, options: LookupOptions) -> list[str]:
    try:
        rows = load_table(table_path(pipeline, options.table))
    except (TableError, OSError):
        return []
    return [text for text in (cell_text(row.get(options.key)) for row in rows) if text]
