"""Lookup tables: readable rows (R120) that have the columns the tool names (R120)."""

from __future__ import annotations

import csv
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from runner.config.checks.context import Checks
from runner.config.checks.paths import existing_path
from runner.config.humanize import suggestion_suffix
from runner.documents.diagnostics import KeyPath
from runner.documents.table_files import TableError, shared_rows, table_version


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
    """The column names of a lookup table, read as a run reads it (documents.table_files: the same
    forms, a `rows:` mapping too, and the same limits). Raises ValueError for an unreadable
    table."""
    if table.suffix.lower() == ".csv":  # the header line is enough
        try:
            with table.open(encoding="utf-8", newline="") as handle:
                return [name.strip() for name in next(csv.reader(handle), [])]
        except (OSError, UnicodeDecodeError) as error:
            raise ValueError(str(error)) from error
    try:
        rows = shared_rows(table_version(table))
    except TableError as error:
        raise ValueError(str(error).removeprefix(f"{table.resolve()}: ")) from error
    columns: dict[str, None] = {}
    for row in rows:
        columns.update(dict.fromkeys(row))
    return list(columns)
