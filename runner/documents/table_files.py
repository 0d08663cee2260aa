"""Lookup tables: rows of a CSV, YAML or JSON file, loaded once and shared.

A `lookup` tool matches rows by key; the offline LLM provider needs the same key values to
recognise them in a question. Both read tables through `load_table`, so a table is parsed once
per process (and again only when the file changes).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

Row = dict[str, Any]

TABLE_SUFFIXES = (".csv", ".yaml", ".yml", ".json")


class TableError(ValueError):
    """A table file is missing or is not a list of rows; the message names the file and the fix."""


def load_table(path: Path) -> list[Row]:
    """The rows of a table file, each a dict with string keys, in file order.

    CSV: the first line is the header; every value is a string. YAML/JSON: a list of mappings, or
    a mapping with a `rows` list. The rows are cached by path and modification time; the caller
    gets its own copies, so changing them changes nothing shared.
    """
    return [dict(row) for row in shared_rows(table_version(path))]


# A table file as it is now: its resolved path, modification time and size.
TableVersion = tuple[Path, int, int]


def table_version(path: Path) -> TableVersion:
    """Which version of a table file there is now (what its cached rows are keyed by). The
    path is resolved again only when what it leads to is another file or has changed (its
    device, inode, modification time or size): a round asks two or three times, and resolving
    walks every folder of the path."""
    path = Path(path)
    try:
        stat = path.stat()  # follows links, as resolving does
    except FileNotFoundError:
        raise TableError(
            f"{path}: table file not found; check the tool's `table:` path (relative to the "
            "pipeline file)"
        ) from None
    seen = (stat.st_dev, stat.st_ino, stat.st_mtime_ns, stat.st_size)
    known = _RESOLVED.get(path)
    if known is not None and known[0] == seen:
        return known[1]
    version = (path.resolve(), stat.st_mtime_ns, stat.st_size)
    _RESOLVED[path] = (seen, version)
    return version


# per table path as given: the file it led to last (device, inode, mtime, size) and its version
_RESOLVED: dict[Path, tuple[tuple[int, int, int, int], TableVersion]] = {}


def shared_rows(version: TableVersion) -> tuple[Row, ...]:
    """The cached rows of one table version themselves, not copies: for readers that only read
    (an index over a million rows must not copy them)."""
    return _cached_rows(*version)


def cell_text(value: Any) -> str:
    """A cell as text: numbers and booleans as written, lists joined, missing as empty."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ", ".join(cell_text(item) for item in value)
    return str(value).strip()


@cache
def _cached_rows(path: Path, _mtime_ns: int, _size: int) -> tuple[Row, ...]:
    # mtime and size are part of the cache key so that an edited table is read again
    suffix = path.suffix.lower()
    if suffix not in TABLE_SUFFIXES:
        raise TableError(
            f"{path}: a table must be a .csv, .yaml, .yml or .json file (got {suffix or 'none'})"
        )
    if suffix != ".csv":
        _refuse_too_large(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise TableError(f"{path}: not UTF-8 text (byte {exc.start}); save it as UTF-8") from None
    except OSError as exc:
        raise TableError(f"{path}: cannot read the table: {exc.strerror or exc}") from None
    rows = _csv_rows(text) if suffix == ".csv" else _document_rows(path, _parse(path, text))
    return tuple(rows)


def _refuse_too_large(path: Path) -> None:
    """A YAML or JSON table past the size limit is refused unread, as a pipeline file is."""
    from runner.documents.composing import TABLE_LIMITS

    try:
        size = path.stat().st_size
    except OSError:
        return  # reading it says why
    if size > TABLE_LIMITS.max_bytes:
        raise TableError(
            f"{path}: the table is larger than {TABLE_LIMITS.max_bytes:,} bytes ({size:,}); a "
            "YAML or JSON table is refused unread past that: write a large table as CSV"
        )


def _csv_rows(text: str) -> list[Row]:
    reader = csv.DictReader(text.splitlines())
    # DictReader puts surplus cells under the key None; a table row has named columns only
    return [{str(k).strip(): v for k, v in row.items() if k is not None} for row in reader]


def _parse(path: Path, text: str) -> Any:
    if path.suffix.lower() == ".json":
        try:
            return json.loads(text)
        except (json.JSONDecodeError, RecursionError) as exc:
            raise TableError(f"{path}: not valid JSON: {exc}") from None
    # YAML through the pipeline loader: safe, bounded (a table may come from anyone), located
    from runner.documents.composing import TABLE_LIMITS
    from runner.documents.loader import LoadError, parse_document

    try:
        return parse_document(path, text, TABLE_LIMITS).data
    except LoadError as exc:
        where = exc.diagnostic.location
        raise TableError(f"{where}: not valid YAML: {exc.diagnostic.message}") from None


def _document_rows(path: Path, data: Any) -> list[Row]:
    if isinstance(data, Mapping) and isinstance(data.get("rows"), list):
        data = data["rows"]
    if not isinstance(data, list) or not all(isinstance(row, Mapping) for row in data):
        raise TableError(
            f"{path}: a table must be a list of rows (mappings of column to value), or a mapping "
            "with a `rows:` list of them"
        )
    return [{str(key): value for key, value in row.items()} for row in data]
