"""A pipeline's lookup tables: where each table file is, and the values of their key columns
(the offline provider recognises them in a question)."""

from __future__ import annotations

from pathlib import Path

from runner.config.model import LookupOptions, Pipeline
from runner.documents.table_files import cell_text, load_table


def key_values(pipeline: Pipeline) -> list[str]:
    """Every value of every `lookup` tool's key column, without duplicates, in table order."""
    values: dict[str, None] = {}
    for tool in pipeline.tools:
        if isinstance(tool.options, LookupOptions):
            table = table_path(pipeline, tool.options.table)
            for row in load_table(table):
                value = cell_text(row.get(tool.options.key))
                if value:
                    values.setdefault(value, None)
    return list(values)


def table_path(pipeline: Pipeline, table: Path) -> Path:
    """A table path as written in the pipeline is relative to the pipeline's folder."""
    return table if table.is_absolute() else pipeline.folder / table
