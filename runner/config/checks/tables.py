"""Lookup tables: readable rows (R120) that have the columns the tool names (R120)."""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from runner.config.checks.context import Checks
from runner.config.checks.paths import existing_path
from runner.config.diagnostics import KeyPath
from runner.config.humanize import suggestion_suffix
from runner.config.loader import LoadError, read_document


def lookup_table(checks: Checks, path: KeyPath, tool: Mapping[str, Any]) -> None:
    table = existing_path(checks, tool["table"], (*path, "table"))
    if table is None:
        return
    try:
        columns = table_columns(table)
    except ValueError as error:
        checks.emit("R120", f"cannot read table `{tool['table']}`: {error}", (*path, "table"))
        return
    if isinstance(tool["key"], list):  # `key: [codename, version]`
        wanted = [((*path, "key", i), name) for i, name in enumerate(tool["key"])]
    else:
        wanted = [((*path, "key"), tool["key"])]
    wanted += [((*path, "columns", i), name) for i, name in enumerate(tool.get("columns", ()))]
    for where, name in wanted:
        if name not in columns:
            checks.emit(
                "R120",
                f"table `{tool['table']}` has no column `{name}`"
                + suggestion_suffix(name, columns),
                where,
                hint=f"its columns: {', '.join(columns)}",
            )


def table_columns(table: Path) -> list[str]:
    """The column names of a lookup table. Raises ValueError for an unreadable table."""
    suffix = table.suffix.lower()
    try:
        if suffix == ".csv":
            with table.open(encoding="utf-8", newline="") as handle:
                return [name.strip() for name in next(csv.reader(handle), [])]
        if suffix == ".json":
            rows = json.loads(table.read_text(encoding="utf-8"))
        else:
            rows = read_document(table).data
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
        raise ValueError(str(error)) from error
    except LoadError as error:
        raise ValueError(error.diagnostic.message) from error
    if not isinstance(rows, list) or not all(isinstance(row, Mapping) for row in rows):
        raise ValueError("it must be a list of rows (mappings from column to value)")
    columns: dict[str, None] = {}
    for row in rows:
        columns.update(dict.fromkeys(str(key) for key in row))
    return list(columns)
