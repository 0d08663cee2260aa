"""How `runner validate` prints its reports: text (for people), json, github (workflow
annotations) and junit (for CI test tabs)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from xml.etree import ElementTree

from runner.config import ValidationReport
from runner.documents.diagnostics import Diagnostic, render

FORMATS = ("text", "json", "github", "junit")


def display_path(path: Path) -> str:
    """A path as the user would write it: relative to the current folder when inside it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def format_reports(
    reports: Sequence[ValidationReport], fmt: str, *, strict: bool = False, color: bool = False
) -> str:
    formatters: dict[str, Callable[[Sequence[ValidationReport], bool, bool], str]] = {
        "text": _text,
        "json": _json,
        "github": _github,
        "junit": _junit,
    }
    return formatters[fmt](reports, strict, color)


def summary(reports: Sequence[ValidationReport], strict: bool) -> str:
    failed = sum(not report.passed(strict) for report in reports)
    errors = sum(len(report.errors) for report in reports)
    warnings = sum(len(report.warnings) for report in reports)
    files = "file" if len(reports) == 1 else "files"
    return (
        f"{len(reports)} {files} checked: {len(reports) - failed} valid, {failed} invalid "
        f"({_count(errors, 'error')}, {_count(warnings, 'warning')})"
    )


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _text(reports: Sequence[ValidationReport], strict: bool, color: bool) -> str:
    blocks: list[str] = []
    for report in reports:
        for diagnostic in report.diagnostics:
            blocks.append(
                render(diagnostic, color=color, display_file=display_path(diagnostic.file))
            )
        status = "ok" if report.passed(strict) else "invalid"
        if report.diagnostics:
            status += f" ({_count(len(report.errors), 'error')}, "
            status += f"{_count(len(report.warnings), 'warning')})"
        blocks.append(f"{display_path(report.path)}: {status}")
    blocks.append(summary(reports, strict))
    return "\n".join(blocks)


def _diagnostic_json(diagnostic: Diagnostic) -> dict[str, object]:
    return {**diagnostic.to_json(), "file": display_path(diagnostic.file)}


def _json(reports: Sequence[ValidationReport], strict: bool, color: bool) -> str:
    files = [
        {
            "file": display_path(report.path),
            "valid": report.passed(strict),
            "errors": len(report.errors),
            "warnings": len(report.warnings),
            "diagnostics": [_diagnostic_json(d) for d in report.diagnostics],
        }
        for report in reports
    ]
    document = {
        "valid": all(report.passed(strict) for report in reports),
        "strict": strict,
        "summary": summary(reports, strict),
        "files": files,
    }
    return json.dumps(document, indent=2, ensure_ascii=False)


# --- GitHub workflow commands (also used by `runner test --format github`) -----------------


def escape_data(text: str) -> str:
    """A workflow command's message, escaped so that GitHub keeps its line breaks and `%`."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value (file, title), where `:` and `,` are separators."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_annotation(
    level: str,
    file: Path,
    message: str,
    *,
    line: int = 0,
    col: int = 0,
    title: str | None = None,
) -> str:
    """One `::error ...::message` (or `::warning`) line that GitHub shows on the file's line;
    `line` 0 means the whole file, `col` 0 no column."""
    properties = [f"file={escape_property(display_path(file))}"]
    if line > 0:
        properties.append(f"line={line}")
        if col > 0:
            properties.append(f"col={col}")
    if title is not None:
        properties.append(f"title={escape_property(title)}")
    return f"::{level} {','.join(properties)}::{escape_data(message)}"


def diagnostic_annotation(diagnostic: Diagnostic, level: str) -> str:
    """A diagnostic (with its hint) as a GitHub annotation titled by its code."""
    message = diagnostic.message
    if diagnostic.hint:
        message += f"\nhint: {diagnostic.hint}"
    return github_annotation(
        level,
        diagnostic.file,
        message,
        line=diagnostic.line,
        col=diagnostic.col,
        title=f"runner {diagnostic.code}",
    )


def _github(reports: Sequence[ValidationReport], strict: bool, color: bool) -> str:
    lines = [
        diagnostic_annotation(diagnostic, "error" if diagnostic.is_error or strict else "warning")
        for report in reports
        for diagnostic in report.diagnostics
    ]
    lines.append(summary(reports, strict))
    return "\n".join(lines)


# What XML 1.0 cannot hold, even escaped: most C0 controls, lone surrogates, U+FFFE and U+FFFF.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def xml_safe(document: str) -> str:
    """An XML document with every character XML cannot hold written as a visible escape
    (`\\x08`): such characters can only stand in text, where a backslash is plain text."""
    return _NOT_XML.sub(lambda match: repr(match.group())[1:-1], document)


def _junit(reports: Sequence[ValidationReport], strict: bool, color: bool) -> str:
    failed = sum(not report.passed(strict) for report in reports)
    suites = ElementTree.Element("testsuites")
    suite = ElementTree.SubElement(
        suites,
        "testsuite",
        name="runner validate",
        tests=str(len(reports)),
        failures=str(failed),
        errors="0",
        skipped="0",
    )
    for report in reports:
        name = display_path(report.path)
        case = ElementTree.SubElement(
            suite, "testcase", classname="runner.validate", name=name, file=name
        )
        text = "\n".join(render(d, display_file=display_path(d.file)) for d in report.diagnostics)
        if not report.passed(strict):
            failure = ElementTree.SubElement(
                case,
                "failure",
                type="invalid pipeline",
                message=f"{_count(len(report.errors), 'error')}, "
                f"{_count(len(report.warnings), 'warning')}",
            )
            failure.text = text
        elif text:
            ElementTree.SubElement(case, "system-out").text = text
    ElementTree.indent(suites)
    xml = ElementTree.tostring(suites, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + xml_safe(xml)
