"""A table row or a record line of a page, as the offline provider quotes and compares it: a
Markdown row's cells as text under its header's names, and `key: value; key: value` records
split into their fields."""

from __future__ import annotations

import re

from runner.llm.units.inline import plain_text

FIELD_SPLIT = re.compile(r";\s+(?=[A-Za-z_][\w ]{0,40}:\s)")
FIELD = re.compile(r"^(?P<key>[A-Za-z_][\w ]{0,40}):\s*(?P<value>.*)$", re.DOTALL)
MIN_RECORD_FIELDS = 3  # fewer `key: value` parts are a sentence, not a record


def row_cells(row: str) -> list[str]:
    inner = row.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") else inner
    return [plain_text(cell) for cell in inner.split("|")]


def row_text(cells: list[str], header: list[str]) -> str:
    """`Ovens and hobs — Functional parts: 10 years; Cosmetic parts: 7 years.` with a header;
    the cells joined by ` | ` without one."""
    if not header or len(header) != len(cells):
        return " | ".join(cell for cell in cells if cell)
    first, rest = cells[0], list(zip(header[1:], cells[1:], strict=True))
    described = "; ".join(f"{name}: {cell}" if name else cell for name, cell in rest if cell)
    text = f"{first} — {described}" if first and described else first or described
    return text if text.endswith((".", "!", "?")) else f"{text}."


def row_fields(cells: list[str], header: list[str]) -> tuple[tuple[str, str], ...]:
    """A row's cells under their column names (`column 2` for a column without one), so that
    rows can be compared field by field; () without a header."""
    if not header or len(header) != len(cells):
        return ()
    return tuple(
        (name or f"column {number}", cell)
        for number, (name, cell) in enumerate(zip(header, cells, strict=True), 1)
    )


def record_fields(text: str) -> tuple[tuple[str, str], ...]:
    parts = FIELD_SPLIT.split(text)
    if len(parts) < MIN_RECORD_FIELDS:
        return ()
    fields = []
    for part in parts:
        match = FIELD.match(part.strip())
        if not match:
            return ()
        fields.append((match["key"].strip(), match["value"].strip()))
    return tuple(fields)


def is_code(word: str) -> bool:
    """A model number, a part number, an error code: letters and digits in one word
    (`KW-620`, `E24`, `KA-STACK-2`), which neither a page's vector nor the wording around it tells
    apart from its neighbours' (plain numbers, `10`, are values, not codes)."""
    return any(ch.isdigit() for ch in word) and any(ch.isalpha() for ch in word)


def code_columns(fields: tuple[tuple[str, str], ...]) -> list[str]:
    """The row's columns named by codes (a specification table's models), lower-cased."""
    return [key.casefold() for key, _ in fields[1:] if is_code(key)]


def for_codes(fields: tuple[tuple[str, str], ...], codes: set[str]) -> str | None:
    """A row of a table whose columns are codes, read for the codes a question names: its first
    cell and those columns alone (`Noise, spin — KW-620: 76 dB.`); None when the question names
    none of its columns (or the columns are not codes): the row is then quoted whole."""
    if not fields or not codes:
        return None
    kept = [(key, value) for key, value in fields[1:] if key.casefold() in codes and value]
    if not kept:
        return None
    (label, first), columns = fields[0], [key for key, _ in kept]
    return row_text([first, *(value for _, value in kept)], [label, *columns])
