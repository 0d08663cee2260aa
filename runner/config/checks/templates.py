"""Templates and expressions: they compile (R109, R111) and use only the variables they will
receive (R110, R112), each located in the YAML file or in the template's own file."""

from __future__ import annotations

import re
from collections.abc import Mapping

from jinja2 import TemplateSyntaxError

from runner.config.checks.context import Checks
from runner.config.checks.paths import existing_path
from runner.config.humanize import suggestion_suffix
from runner.documents.diagnostics import KeyPath, value_at
from runner.documents.loader import Position
from runner.templating.environment import Reads, expression_reads, template_reads

Allowed = frozenset[str] | set[str]


def inline_template(checks: Checks, path: KeyPath, allowed: Allowed) -> None:
    source = value_at(checks.data, path)
    try:
        reads = template_reads(source)
    except TemplateSyntaxError as error:
        line, col = inline_line(checks, path, error.lineno)
        checks.emit_at(
            "R109",
            f"template does not compile: {error.message}",
            checks.document.path,
            line,
            col,
            path,
        )
        return
    for name, lineno in unknown_reads(reads, allowed):
        line, col = inline_line(checks, path, lineno, name)
        checks.emit_at(
            "R110",
            f"the template uses `{name}`, which it never receives"
            + suggestion_suffix(name, allowed),
            checks.document.path,
            line,
            col,
            path,
            hint=f"available here: {', '.join(sorted(allowed))}",
        )


def file_template(checks: Checks, path: KeyPath, allowed: Allowed) -> None:
    relative = value_at(checks.data, path)
    target = existing_path(checks, relative, path)
    if target is None:
        return
    try:
        source = target.read_text(encoding="utf-8")
        reads = template_reads(source)
    except UnicodeDecodeError:
        checks.emit("R109", f"template `{relative}` is not UTF-8 text", path)
        return
    except TemplateSyntaxError as error:
        checks.emit_at(
            "R109", f"template does not compile: {error.message}", target, error.lineno, 1, path
        )
        return
    lines = source.splitlines()
    for name, lineno in unknown_reads(reads, allowed):
        checks.emit_at(
            "R110",
            f"the template uses `{name}`, which it never receives"
            + suggestion_suffix(name, allowed),
            target,
            lineno,
            column_of(name, lines[lineno - 1] if lineno <= len(lines) else ""),
            path,
            hint=f"available here: {', '.join(sorted(allowed))}",
        )


def template_pair(checks: Checks, path: KeyPath, allowed: Allowed) -> None:
    """A `template` (file) / `prompt` (inline) pair at `path`, whichever is given."""
    block = value_at(checks.data, path)
    if not isinstance(block, Mapping):
        return
    if "template" in block:
        file_template(checks, (*path, "template"), allowed)
    if "prompt" in block:
        inline_template(checks, (*path, "prompt"), allowed)


def expression(checks: Checks, path: KeyPath, allowed: Allowed) -> None:
    source = value_at(checks.data, path)
    position = checks.document.position(path)
    try:
        unknown = unknown_reads(expression_reads(source), allowed)
    except TemplateSyntaxError as error:
        checks.emit(
            "R111",
            f"expression does not compile: {error.message}",
            path,
            hint="write a Jinja expression without {{ }}, e.g. `params.items | length > 1`",
        )
        return
    line_text = checks.line_text(position.line)
    for name, _ in unknown:
        checks.emit_at(
            "R112",
            f"the expression uses `{name}`, which it never receives"
            + suggestion_suffix(name, allowed),
            checks.document.path,
            position.line,
            column_of(name, line_text, start=position.col - 1) or position.col,
            path,
            hint=f"available here: {', '.join(sorted(allowed))}",
        )


def inline_line(checks: Checks, path: KeyPath, lineno: int, name: str = "") -> tuple[int, int]:
    """Where line `lineno` of an inline template (and `name` in it) is in the YAML file."""
    position: Position = checks.document.position(path)
    block = position.style in ("|", ">")
    line = position.line + lineno - (0 if block else 1)
    last = max(position.end_line, position.line)
    candidates = [line, *range(position.line, last + 1)] if name else [line]
    for candidate in candidates:
        text = checks.line_text(candidate)
        start = position.col - 1 if candidate == position.line and not block else 0
        col = column_of(name, text, start=start) if name else 0
        if col or not name:
            indent = len(text) - len(text.lstrip())
            return min(candidate, last), col or (position.col if not block else indent + 1)
    return position.line, position.col


def unknown_reads(reads: Reads, allowed: Allowed) -> Reads:
    return tuple((name, line) for name, line in reads if name not in allowed)


def column_of(name: str, text: str, start: int = 0) -> int:
    """1-based column of `name` as a whole word in `text` (from `start`), or 0."""
    match = re.compile(rf"(?<![\w.]){re.escape(name)}\b").search(text, start)
    return match.start() + 1 if match else 0
