"""How `runner eval` prints a run: `text` (people), `markdown` (a pull request's comment),
`json` (scripts), `junit` (CI test tabs: a case per question) and `github` (workflow
annotations on the question set's lines).

A question *passes* when every check that applies to it passes: its outcome is not an error,
the round did not degrade, a gold source was retrieved and cited (when it has `sources`) and
its `answer` texts are in the answer.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

from runner.config.formats import github_annotation, xml_safe
from runner.eval.compare import Comparison
from runner.eval.definitions import defined

FORMATS = ("text", "markdown", "json", "junit", "github")
SHOWN = (
    "answered",
    "hit@1",
    "hit@k",
    "mrr",
    "sourced",
    "checks",
    "groundedness",
    "relevance",
    "correctness",
    "faithfulness",
    "judged_relevance",
    "degraded",
    "errors",
    "llm_calls",
    "tokens",
    "latency_p50_ms",
    "latency_p95_ms",
)
TAG_SHOWN = (
    "questions",
    "hit@1",
    "hit@k",
    "mrr",
    "sourced",
    "checks",
    "groundedness",
    "relevance",
    "errors",
)
JUDGED = ("correctness", "faithfulness", "judged_relevance")  # shown only when graded
LISTED_CHANGES = 20


@dataclass
class Printed:
    """What a format prints from."""

    summary: Mapping[str, Any]
    records: Sequence[Mapping[str, Any]]
    comparison: Comparison | None
    gates: Sequence[str]  # why the run fails CI (empty: it passes)
    questions_file: str
    folder: str


def problems(record: Mapping[str, Any]) -> list[str]:
    """Why a question fails, one phrase each; empty when it passes."""
    found = []
    if record.get("outcome") == "error":
        found.append(f"error: {record.get('error')}")
    if record.get("degraded"):
        found.append("degraded: " + "; ".join(record.get("warnings") or ()))
    if record.get("hit@k") is False:
        found.append("no gold source retrieved (" + ", ".join(record.get("gold") or ()) + ")")
    if record.get("sourced") is False:
        found.append("the answer cites no gold source")
    for check in record.get("checks") or ():
        if not check["passed"]:
            found.append(f"the answer lacks {check['text']!r}")
    return found


def render(printed: Printed, fmt: str) -> str:
    formatters: dict[str, Callable[[Printed], str]] = {
        "text": format_text,
        "markdown": format_markdown,
        "json": format_json,
        "junit": format_junit,
        "github": format_github,
    }
    return formatters[fmt](printed)


def number(value: Any, metric: str = "") -> str:
    if value is None:
        return "–"
    if metric.endswith("_ms"):
        return f"{value:.0f} ms"
    if metric in ("llm_calls", "tokens", "questions"):
        return f"{value:g}" if metric == "questions" else f"{value:.1f}"
    return f"{value:.3f}"


def _delta(printed: Printed, metric: str) -> str:
    if printed.comparison is None:
        return ""
    change = printed.comparison.metrics.get(metric) or {}
    delta = change.get("delta")
    if not delta:
        return "="
    sign = "+" if delta > 0 else ""
    mark = "▲" if change.get("direction") == "better" else "▼"
    return (
        f"{mark} {sign}{delta:.3f}" if not metric.endswith("_ms") else f"{mark} {sign}{delta:.0f}"
    )


# --- text ---------------------------------------------------------------------------------


def format_text(printed: Printed) -> str:
    metrics = printed.summary["metrics"]
    lines = [f"{printed.questions_file}: {metrics['questions']} questions"]
    for name in SHOWN:
        if metrics.get(name) is None and name in JUDGED:
            continue
        delta = _delta(printed, name)
        lines.append(f"  {name:<16}{number(metrics.get(name), name):>10}  {delta}".rstrip())
    by_tag = printed.summary.get("by_tag") or {}
    if by_tag:
        lines.append("by tag:")
        header = "  " + f"{'tag':<20}" + "".join(f"{name:>14}" for name in TAG_SHOWN)
        lines.append(header)
        for tag, values in by_tag.items():
            cells = "".join(f"{number(values.get(name), name):>14}" for name in TAG_SHOWN)
            lines.append(f"  {tag[:19]:<20}{cells}")
    purposes = printed.summary.get("by_purpose") or {}
    if purposes:
        shown = ", ".join(
            f"{purpose} {usage['calls']:g} ({usage['prompt_tokens'] + usage['completion_tokens']:g}"
            " tokens)"
            for purpose, usage in purposes.items()
        )
        lines.append(f"LLM calls by purpose: {shown}")
    timing = printed.summary.get("timing") or {}
    if timing.get("questions_per_s"):
        lines.append(
            f"asked {timing['asked']} questions in {timing['ask_s']:.1f} s "
            f"({timing['questions_per_s']:.1f} a second)"
        )
    lines += _changes_text(printed.comparison)
    lines += [f"FAIL: {gate}" for gate in printed.gates]
    lines.append("what the figures mean:")
    lines += [f"  {name:<16}{text}" for name, text in shown_definitions(printed).items()]
    lines.append(f"results: {printed.folder}")
    return "\n".join(lines)


def shown_definitions(printed: Printed) -> dict[str, str]:
    """The definitions of the metrics a format shows (a judge's only when it graded)."""
    metrics = printed.summary["metrics"]
    names = [name for name in SHOWN if not (name in JUDGED and metrics.get(name) is None)]
    return defined(names)


def errors_change(comparison: Comparison) -> str:
    """The share of questions that ended in an error, in the baseline and now."""
    change = comparison.metrics.get("errors") or {}
    return f"errors {number(change.get('before'))} → {number(change.get('after'))}"


def _changes_text(comparison: Comparison | None) -> list[str]:
    if comparison is None:
        return []
    lines = [
        f"compared with {comparison.baseline}: {len(comparison.worse)} worse, "
        f"{len(comparison.better)} better; {errors_change(comparison)}"
    ]
    for title, changes in (("worse", comparison.worse), ("better", comparison.better)):
        for change in changes[:LISTED_CHANGES]:
            lines.append(f"  {title} {change.id}: {change.question}")
            lines += [f"    - {reason.text}" for reason in change.reasons]
        if len(changes) > LISTED_CHANGES:
            lines.append(f"  … and {len(changes) - LISTED_CHANGES} more {title} (see the report)")
    return lines


# --- markdown ---------------------------------------------------------------------------------


def format_markdown(printed: Printed) -> str:
    metrics = printed.summary["metrics"]
    out = [f"### runner eval: {printed.questions_file} ({metrics['questions']} questions)", ""]
    with_baseline = printed.comparison is not None
    out.append("| metric | value |" + (" change |" if with_baseline else ""))
    out.append("|---|---:|" + ("---:|" if with_baseline else ""))
    for name in SHOWN:
        if metrics.get(name) is None and name in JUDGED:
            continue
        row = f"| {name} | {number(metrics.get(name), name)} |"
        out.append(row + (f" {_delta(printed, name)} |" if with_baseline else ""))
    by_tag = printed.summary.get("by_tag") or {}
    if by_tag:
        out += ["", "<details><summary>By tag</summary>", ""]
        out.append("| tag | " + " | ".join(TAG_SHOWN) + " |")
        out.append("|---|" + "---:|" * len(TAG_SHOWN))
        for tag, values in by_tag.items():
            cells = " | ".join(number(values.get(name), name) for name in TAG_SHOWN)
            out.append(f"| {tag} | {cells} |")
        out += ["", "</details>"]
    comparison = printed.comparison
    if comparison is not None:
        out += [
            "",
            f"**{len(comparison.worse)} worse, {len(comparison.better)} better** "
            f"than the baseline; {errors_change(comparison)}.",
        ]
        for title, changes in (("Worse", comparison.worse), ("Better", comparison.better)):
            if not changes:
                continue
            out += ["", f"{title}:", ""]
            for change in changes[:LISTED_CHANGES]:
                why = "; ".join(reason.text for reason in change.reasons)
                out.append(f"- `{change.id}` {_md(change.question)}: {_md(why)}")
            if len(changes) > LISTED_CHANGES:
                out.append(f"- … and {len(changes) - LISTED_CHANGES} more")
    if printed.gates:
        out += ["", "**Fails:** " + "; ".join(printed.gates)]
    out += ["", "<details><summary>What the figures mean</summary>", ""]
    out += [f"- `{name}`: {_md(text)}" for name, text in shown_definitions(printed).items()]
    out += ["", "</details>"]
    return "\n".join(out) + "\n"


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


# --- json ---------------------------------------------------------------------------------


def format_json(printed: Printed) -> str:
    document = {
        "results": printed.folder,
        "summary": dict(printed.summary),
        "comparison": printed.comparison.to_json() if printed.comparison else None,
        "failed": list(printed.gates),
        "definitions": shown_definitions(printed),
    }
    return json.dumps(document, ensure_ascii=False, indent=2)


# --- junit ------------------------------------------------------------------------------------


def format_junit(printed: Printed) -> str:
    worse = {c.id: c for c in printed.comparison.worse} if printed.comparison else {}
    suite = ElementTree.Element("testsuite", name=f"runner eval {printed.questions_file}")
    properties = ElementTree.SubElement(suite, "properties")
    metrics = printed.summary["metrics"]
    for name, text in shown_definitions(printed).items():
        value = number(metrics.get(name), name)
        ElementTree.SubElement(properties, "property", name=name, value=f"{value} ({text})")
    failures = 0
    for record in printed.records:
        case = ElementTree.SubElement(
            suite,
            "testcase",
            classname=printed.questions_file,
            name=str(record["id"]),
            time=f"{(record.get('latency_ms') or 0) / 1000:.3f}",
        )
        found = problems(record)
        if record["id"] in worse:
            found += [r.text for r in worse[record["id"]].reasons if not r.better]
        if found:
            failures += 1
            failure = ElementTree.SubElement(case, "failure", message=found[0][:200])
            failure.text = f"{record.get('question')}\n" + "\n".join(found)
    for gate in printed.gates:
        failures += 1
        case = ElementTree.SubElement(suite, "testcase", classname="gates", name=gate)
        ElementTree.SubElement(case, "failure", message=gate)
    suite.set("tests", str(len(printed.records) + len(printed.gates)))
    suite.set("failures", str(failures))
    xml = ElementTree.tostring(suite, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + xml_safe(xml)


# --- github -------------------------------------------------------------------------------------


def format_github(printed: Printed) -> str:
    """A warning on each question that fails, an error on each that got worse and each failed
    gate, and a notice with the summary."""
    lines = []
    worse = {c.id: c for c in printed.comparison.worse} if printed.comparison else {}
    for record in printed.records:
        found = problems(record)
        line = int(record.get("line") or 1)
        if record["id"] in worse:
            why = "; ".join(r.text for r in worse[record["id"]].reasons if not r.better)
            lines.append(_annotation("error", printed, f"{record['id']} got worse: {why}", line))
        elif found:
            message = f"{record['id']}: " + "; ".join(found)
            lines.append(_annotation("warning", printed, message, line))
    for gate in printed.gates:
        lines.append(_annotation("error", printed, f"runner eval: {gate}", 0))
    metrics = printed.summary["metrics"]
    shown = ", ".join(
        f"{name} {number(metrics.get(name), name)}" for name in ("hit@1", "hit@k", "mrr", "sourced")
    )
    lines.append(_annotation("notice", printed, f"runner eval: {shown}", 0))
    meant = defined(("hit@1", "hit@k", "mrr", "sourced"))
    said = "; ".join(f"{name}: {text}" for name, text in meant.items())
    lines.append(_annotation("notice", printed, f"what the figures mean: {said}", 0))
    return "\n".join(lines)


def _annotation(level: str, printed: Printed, message: str, line: int) -> str:
    return github_annotation(
        level, Path(printed.questions_file), message, line=line, title="runner eval"
    )
