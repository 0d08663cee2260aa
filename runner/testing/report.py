"""How `runner test` prints its results: `text` (people), `junit` (CI test tabs) and `github`
(workflow annotations on the test files' lines).

A failing case shows what differed, the round's answer or question, the problems the round ran
into (tool errors, warnings), its LLM calls and its task tree.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from xml.etree import ElementTree

from runner.config.formats import (
    diagnostic_annotation,
    display_path,
    github_annotation,
    xml_safe,
)
from runner.documents.diagnostics import render
from runner.testing.execute import CaseFileReport, CaseReport, TurnReport
from runner.testing.expect import calls_summary, source_label

FORMATS = ("text", "junit", "github")
INDENT = "      "


def format_reports(reports: Sequence[CaseFileReport], fmt: str) -> str:
    formatters: dict[str, Callable[[Sequence[CaseFileReport]], str]] = {
        "text": format_text,
        "junit": format_junit,
        "github": format_github,
    }
    return formatters[fmt](reports)


# --- counting ---------------------------------------------------------------------------------


def summary(reports: Sequence[CaseFileReport]) -> str:
    cases = [case for report in reports for case in report.cases]
    failed = sum(not case.passed for case in cases)
    broken = sum(bool(report.diagnostics or report.error) for report in reports)
    seconds = sum(case.seconds for case in cases)
    text = (
        f"{_count(len(reports), 'file')}, {_count(len(cases), 'case')}: "
        f"{len(cases) - failed} passed, {failed} failed"
    )
    if broken:
        text += f", {_count(broken, 'file')} could not run"
    return text + f" ({seconds:.1f} s)"


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


# --- text -------------------------------------------------------------------------------------


def format_text(reports: Sequence[CaseFileReport]) -> str:
    blocks: list[str] = []
    for report in reports:
        title = display_path(report.path)
        if report.pipeline is not None:
            title += f" (pipeline {display_path(report.pipeline)})"
        lines = [title]
        lines += [f"  {line}" for line in _file_problems(report)]
        for case in report.cases:
            lines.append(case_line(case))
            if not case.passed:
                lines += [INDENT + line if line else "" for line in case_details(report, case)]
        if not report.cases and not report.diagnostics and report.error is None:
            lines.append("  (no case selected)")
        blocks.append("\n".join(lines))
    blocks.append(summary(reports))
    return "\n\n".join(blocks)


def case_line(case: CaseReport) -> str:
    status = "PASS" if case.passed else "FAIL"
    return f"  {status}  {case.case.name}  ({case.seconds:.2f} s)"


def _file_problems(report: CaseFileReport) -> list[str]:
    lines = [render(d, display_file=display_path(d.file)) for d in report.diagnostics]
    if report.error is not None:
        lines.append(f"error: the pipeline could not be opened: {report.error}")
    return [line for block in lines for line in block.splitlines()]


def case_details(report: CaseFileReport, case: CaseReport) -> list[str]:
    """What differed in the case's failing turn, and how the round went."""
    lines: list[str] = []
    turn = case.failed_turn
    if turn is not None:
        number = case.turns.index(turn) + 1
        place = f"{display_path(report.path)}:{turn.turn.line}"
        lines.append(f"{place}: turn {number}, {turn.turn.label}")
        lines += [f"  - {difference}" for difference in turn.differences]
    if case.error is not None:
        lines.append(f"{display_path(report.path)}:{case.case.line}: error: {case.error}")
    if turn is not None and turn.result is not None:
        lines += _round(turn)
    return lines


def _round(turn: TurnReport) -> list[str]:
    result = turn.result or {}
    lines = [""]
    shown = {"answer": "answer", "clarification": "question", "error": "error"}
    outcome = str(result.get("outcome"))
    lines.append(f"{shown.get(outcome, outcome)}: " + str(result.get(shown.get(outcome, ""), "")))
    sources = result.get("sources") or []
    if sources:
        lines.append("sources: " + ", ".join(source_label(s) for s in sources))
    if turn.problems:
        lines.append("problems during the round:")
        lines += [f"  - {problem}" for problem in turn.problems]
    lines.append("LLM calls: " + calls_summary(result.get("stats") or {}))
    if result.get("tasks") is not None:
        lines.append("task tree:")
        lines += ["  " + line for line in tree_text(result["tasks"]).splitlines()]
    return lines


def tree_text(tasks: dict[str, object]) -> str:
    """The task tree as `runner run` draws it, as plain text."""
    from rich.console import Console

    from runner.render import task_tree

    buffer = io.StringIO()
    console = Console(file=buffer, width=120, color_system=None, highlight=False, soft_wrap=True)
    console.print(task_tree(tasks))
    return buffer.getvalue().rstrip()


# --- junit ------------------------------------------------------------------------------------


def format_junit(reports: Sequence[CaseFileReport]) -> str:
    cases = [case for report in reports for case in report.cases]
    root = ElementTree.Element(
        "testsuites",
        name="runner test",
        tests=str(len(cases) + sum(_broken(r) for r in reports)),
        failures=str(sum(not case.passed for case in cases)),
        errors=str(sum(_broken(r) for r in reports)),
        time=f"{sum(case.seconds for case in cases):.3f}",
    )
    for report in reports:
        _junit_suite(root, report)
    ElementTree.indent(root)
    xml = ElementTree.tostring(root, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + xml_safe(xml)


def _broken(report: CaseFileReport) -> int:
    return int(bool(report.diagnostics or report.error))


def _junit_suite(root: ElementTree.Element, report: CaseFileReport) -> None:
    name = display_path(report.path)
    suite = ElementTree.SubElement(
        root,
        "testsuite",
        name=name,
        tests=str(len(report.cases) + _broken(report)),
        failures=str(sum(not case.passed for case in report.cases)),
        errors=str(_broken(report)),
        skipped="0",
        time=f"{sum(case.seconds for case in report.cases):.3f}",
    )
    classname = name.rsplit(".", 1)[0].replace("/", ".")
    if _broken(report):
        case = ElementTree.SubElement(suite, "testcase", classname=classname, name="(file)")
        case.set("file", name)
        problem = ElementTree.SubElement(case, "error", message="the test file could not run")
        problem.text = "\n".join(_file_problems(report))
    for case_report in report.cases:
        element = ElementTree.SubElement(
            suite,
            "testcase",
            classname=classname,
            name=case_report.case.name,
            file=name,
            line=str(case_report.case.line),
            time=f"{case_report.seconds:.3f}",
        )
        if not case_report.passed:
            failure = ElementTree.SubElement(element, "failure", message=_headline(case_report))
            failure.set("type", "error" if case_report.error else "expectation")
            failure.text = "\n".join(case_details(report, case_report))


def _headline(case: CaseReport) -> str:
    if case.error is not None:
        return case.error.splitlines()[0]
    turn = case.failed_turn
    if turn is None or not turn.differences:
        return "failed"
    more = len(turn.differences) - 1
    return turn.differences[0] + (f" (and {more} more)" if more else "")


# --- github -----------------------------------------------------------------------------------


def format_github(reports: Sequence[CaseFileReport]) -> str:
    lines: list[str] = []
    for report in reports:
        lines += [diagnostic_annotation(diagnostic, "error") for diagnostic in report.diagnostics]
        if report.error is not None:
            lines.append(github_annotation("error", report.path, report.error))
        for case in report.cases:
            if case.passed:
                continue
            turn = case.failed_turn
            lines.append(
                github_annotation(
                    "error",
                    report.path,
                    "\n".join(case_details(report, case)),
                    line=turn.turn.line if turn is not None else case.case.line,
                    title=f"runner test: {case.case.name}",
                )
            )
    lines.append(summary(reports))
    return "\n".join(lines)
