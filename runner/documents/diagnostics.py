"""Diagnostics: what `runner validate` and `load_pipeline` report, and how a person reads them.

Every problem found in a pipeline file — a YAML syntax error, a schema error, a semantic error —
becomes one `Diagnostic` with a stable code, a place (`file:line:col`), the key path, a message
written for the author and, where one fits, a hint saying how to fix it.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from functools import lru_cache
from pathlib import Path
from typing import Any

KeyPath = tuple[str | int, ...]
# the longest message and hint a diagnostic keeps (cut with an ellipsis)
MAX_MESSAGE, MAX_HINT = 1000, 400


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True)
class Diagnostic:
    """One problem found in a file: its code, message, place and severity."""

    code: str
    message: str
    file: Path
    line: int = 0  # 1-based; 0 when the problem has no place (an unreadable file)
    col: int = 0
    severity: Severity = Severity.ERROR
    path: KeyPath = ()
    hint: str = ""
    # How deep in the document the problem sits; sorting by it puts the most specific first.
    depth: int = field(default=0, compare=False)

    def __post_init__(self) -> None:
        # A report stays readable whatever the file holds: a hint listing 9,500 tool names made
        # 1,500 diagnostics print 97 MB.
        for name, limit in (("message", MAX_MESSAGE), ("hint", MAX_HINT)):
            text = getattr(self, name)
            if len(text) > limit:
                object.__setattr__(self, name, text[: limit - 1] + "…")

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR

    @property
    def key_path(self) -> str:
        return format_key_path(self.path)

    @property
    def location(self) -> str:
        if self.line <= 0:
            return str(self.file)
        return f"{self.file}:{self.line}:{self.col}"

    def headline(self) -> str:
        """`file:line:col: error: message [code]`: one line, as compilers print them."""
        return f"{self.location}: {self.severity.value}: {self.message} [{self.code}]"

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "severity": self.severity.value,
            "message": self.message,
            "file": str(self.file),
            "line": self.line,
            "col": self.col,
            "path": self.key_path,
            "hint": self.hint,
        }


class PipelineError(Exception):
    """A pipeline file that cannot be loaded; carries every diagnostic of the file."""

    def __init__(self, path: Path, diagnostics: Sequence[Diagnostic]) -> None:
        self.path = path
        self.diagnostics = tuple(diagnostics)
        errors = [d for d in self.diagnostics if d.is_error]
        super().__init__(
            f"{path}: {len(errors)} error(s)\n" + "\n".join(render(d) for d in self.diagnostics)
        )


def format_key_path(path: KeyPath) -> str:
    """`("tools", 2, "decompose")` -> `tools[2].decompose`."""
    text = ""
    for part in path:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(top level)"


def value_at(data: Any, path: KeyPath) -> Any:
    """The value at a key path of loaded YAML data, or None where the path does not exist."""
    for part in path:
        try:
            data = data[part]
        except (KeyError, IndexError, TypeError):
            return None
    return data


def sort_diagnostics(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    """Errors before warnings, then in file order; at one place the most specific first."""
    return sorted(
        diagnostics,
        key=lambda d: (not d.is_error, str(d.file), d.line, d.col, -d.depth, d.code),
    )


# Snippets come from at most this much of a file: more is refused unread by the loader (Y011),
# and reading a 50 MB file whole to show its first line cost a gigabyte.
_SNIPPET_SOURCE_BYTES = 10 * 1024 * 1024


class _Head:
    """A file's first `_SNIPPET_SOURCE_BYTES` as text, and where its lines start, found as far
    as a diagnostic asks and kept: 1,500 diagnostics of one file cost one pass, and showing line
    1 of a 10 MB list does not split it into 2.5 million line objects (that cost 250 MB)."""

    def __init__(self, path: Path) -> None:
        try:
            with path.open("rb") as handle:
                head = handle.read(_SNIPPET_SOURCE_BYTES)
        except OSError:
            head = b""
        self.text = head.decode("utf-8", errors="replace")
        self.starts = array("q", [0])

    def line(self, number: int) -> str | None:
        """Line `number` (1-based), or None past the end."""
        text, starts = self.text, self.starts
        while len(starts) < number and starts[-1] >= 0:
            found = text.find("\n", starts[-1])
            starts.append(found + 1 if found >= 0 else -1)
        start = starts[number - 1] if number <= len(starts) else -1
        if start < 0 or start >= len(text):
            return None
        end = text.find("\n", start)
        return text[start : end if end >= 0 else len(text)].rstrip("\r")


@lru_cache(maxsize=256)
def _file_head(path: Path) -> _Head:
    return _Head(path)


def _file_line(path: Path, number: int) -> str | None:
    return _file_head(path).line(number)


# A snippet shows at most this many characters of its line, around the caret.
SNIPPET_WIDTH = 100


def snippet(diagnostic: Diagnostic, lines: Sequence[str] | None = None) -> str:
    """The offending line with a gutter and a caret under the column, or "" without a place.
    A long line is cut to a window around the caret, each cut end shown as `…`."""
    if diagnostic.line <= 0:
        return ""
    if lines is not None:
        line = lines[diagnostic.line - 1] if diagnostic.line <= len(lines) else None
    else:
        line = _file_line(diagnostic.file, diagnostic.line)
    if line is None:
        return ""
    text, caret_at = _window(line, max(diagnostic.col - 1, 0))
    gutter = f"{diagnostic.line:>4} | "
    caret = " " * (len(gutter) - 2) + "| " + " " * caret_at + "^"
    return f"{gutter}{text}\n{caret}"


def _window(line: str, column: int) -> tuple[str, int]:
    """At most SNIPPET_WIDTH characters of a line around a 0-based column, and the caret's
    offset in them. Tabs count as one column, as YAML counts them."""
    # only the window's neighbourhood is expanded: a line may be megabytes long
    start = max(0, min(column - SNIPPET_WIDTH // 2, len(line) - SNIPPET_WIDTH))
    text = visible(line[start : start + SNIPPET_WIDTH].expandtabs(1))
    caret_at = column - start
    if start > 0:
        text, caret_at = "…" + text[1:], caret_at
    if start + SNIPPET_WIDTH < len(line):
        text = text[:-1] + "…"
    return text, caret_at


def render(
    diagnostic: Diagnostic,
    lines: Sequence[str] | None = None,
    *,
    color: bool = False,
    display_file: str | None = None,
) -> str:
    """A diagnostic for a terminal: headline, caret snippet, hint."""
    headline = diagnostic.headline()
    if display_file is not None:
        headline = headline.replace(str(diagnostic.file), display_file, 1)
    parts = [_paint_headline(visible(headline), diagnostic, color)]
    code = snippet(diagnostic, lines)
    if code:
        parts.append(_paint(code, "blue", color) if color else code)
    if diagnostic.hint:
        parts.append(f"     = hint: {visible(diagnostic.hint)}")
    return "\n".join(parts)


# Control characters as the Unicode pictures of them (U+2400…), C1 ones as U+FFFD: a file may
# hold any of them (in a quoted text, as an escape), and printed raw they would move the cursor,
# clear the screen or retitle the terminal. One character for one keeps the caret in place.
_PICTURES = {
    **{code: 0x2400 + code for code in range(0x20) if code != 0x0A},
    0x7F: 0x2421,
    **{code: 0xFFFD for code in range(0x80, 0xA0)},
}


def visible(text: str) -> str:
    """`text` with its control characters (but line breaks) shown as symbols."""
    return text.translate(_PICTURES)


_COLORS = {"red": "31", "yellow": "33", "blue": "34", "bold": "1"}


def _paint(text: str, color: str, enabled: bool) -> str:
    return f"\x1b[{_COLORS[color]}m{text}\x1b[0m" if enabled else text


def _paint_headline(headline: str, diagnostic: Diagnostic, color: bool) -> str:
    if not color:
        return headline
    label = f"{diagnostic.severity.value}:"
    painted = _paint(label, "red" if diagnostic.is_error else "yellow", True)
    return headline.replace(label, painted, 1)
