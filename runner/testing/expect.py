"""Checking one round's result against a turn's `expect`: a list of what differed, in words.

The result is the `runner run --json` object (`schemas/result.schema.json`), so a check reads
exactly what a user of the command line sees; its `retrieval` list is read as the trace's typed
`retrieval` events (runner.trace.events).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from fnmatch import fnmatchcase
from typing import Any

from runner.testing.model import Expect, RetrievedExpect, SourceExpect, TextExpect
from runner.text.headings import same_heading
from runner.trace.events import RankedPage, Retrieval


def check(expect: Expect, result: Mapping[str, Any]) -> list[str]:
    """Every way `result` differs from `expect`; empty when it meets it."""
    return [
        *_outcome(expect, result),
        *_text("answer", expect.answer, result.get("answer")),
        *_text("question", expect.question, result.get("question")),
        *_text("error", expect.error, result.get("error")),
        *_sources(expect, result.get("sources") or []),
        *_tools(expect, list(tool_runs(result.get("tasks")))),
        *_skips(expect, list(walk(result.get("tasks")))),
        *_calls(expect, result.get("stats") or {}),
        *_degraded(expect, result),
        *_retrieved(expect, [Retrieval.listed(r) for r in result.get("retrieval") or []]),
    ]


def _degraded(expect: Expect, result: Mapping[str, Any]) -> Iterator[str]:
    """A degraded round (a tool, coordinator or task failed, `result.degraded`) fails the turn
    unless the turn expects it (`degraded: true`) or the round ended with an error anyway."""
    degraded = bool(result.get("degraded"))
    if expect.degraded is None:
        if degraded and result.get("outcome") != "error":
            failures = "; ".join(result.get("warnings") or ()) or "see the trace"
            yield (
                f"the round is degraded: {failures}. If the case means to test that, say "
                "`degraded: true` in its expect"
            )
    elif expect.degraded and not degraded:
        yield "expected a degraded round (a failed tool, coordinator or task), but nothing failed"
    elif not expect.degraded and degraded:
        yield f"expected no degraded round, got one: {'; '.join(result.get('warnings') or ())}"


def _outcome(expect: Expect, result: Mapping[str, Any]) -> Iterator[str]:
    if expect.outcome is not None and expect.outcome != result.get("outcome"):
        yield f"outcome: expected {expect.outcome}, got {result.get('outcome')}"


def _text(what: str, expect: TextExpect | None, text: str | None) -> Iterator[str]:
    if expect is None:
        return
    if text is None:
        yield f"{what}: expected one, but the round gave none"
        return
    folded = text.casefold()
    for wanted in expect.contains:
        if wanted.casefold() not in folded:
            yield f"{what} does not contain {wanted!r}"
    for unwanted in expect.not_contains:
        if unwanted.casefold() in folded:
            yield f"{what} contains {unwanted!r}, which it must not"
    if expect.matches is not None:
        from runner.text.patterns import PatternTimeoutError, search_text

        try:
            if not search_text(expect.matches, text):
                yield f"{what} does not match /{expect.matches}/"
        except PatternTimeoutError as error:
            yield f"{what}: {error}"


def _sources(expect: Expect, sources: Sequence[Mapping[str, Any]]) -> Iterator[str]:
    for wanted in expect.sources:
        if not any(_same_source(wanted, source) for source in sources):
            yield f"source missing: {wanted}"
    if expect.no_sources and sources:
        yield f"expected no sources, got {', '.join(source_label(s) for s in sources)}"


def _same_source(wanted: SourceExpect, source: Mapping[str, Any]) -> bool:
    held = [source.get("heading"), *(source.get("headings") or ())]  # a page of several sections
    return _same_place(wanted, str(source.get("document", "")), source.get("page"), held)


def _same_place(wanted: SourceExpect, document: str, page: Any, held: Sequence[Any]) -> bool:
    same_document = document == wanted.document or document.endswith("/" + wanted.document)
    same_page = wanted.page is None or page == wanted.page
    same_section = wanted.heading is None or any(same_heading(wanted.heading, h) for h in held)
    return same_document and same_page and same_section


def source_label(source: Mapping[str, Any]) -> str:
    """`document § heading p. N`: what a source expectation can pin, shown to compare."""
    return _place_label(source.get("document"), source.get("heading"), source.get("page"))


def _place_label(document: Any, heading: Any, page: Any) -> str:
    label = str(document) + (f" § {heading}" if heading else "")
    return label + (f" p. {page}" if page is not None else "")


def _tools(expect: Expect, runs: list[tuple[str, str]]) -> Iterator[str]:
    """`ran`: some tool run matches the key and did not fail; `not_ran`: none matches."""
    for pattern in expect.ran:
        matching = [(key, status) for key, status in runs if fnmatchcase(key, pattern)]
        if not matching:
            yield f"did not run: {pattern}"
        elif all(status == "failed" for _key, status in matching):
            failed = ", ".join(key for key, _status in matching)
            yield f"ran but failed: {failed} (see the run's problems below)"
    for pattern in expect.not_ran:
        ran = [key for key, _status in runs if fnmatchcase(key, pattern)]
        if ran:
            yield f"ran, but must not have: {', '.join(ran)}"


def _skips(expect: Expect, tasks: list[Mapping[str, Any]]) -> Iterator[str]:
    skipped = {task["task_no"] for task in tasks if task.get("skipped")}
    ran = {task["task_no"] for task in tasks if not task.get("skipped")}
    for pattern in expect.skipped:
        if not any(fnmatchcase(no, pattern) for no in skipped):
            yield f"not skipped: {pattern} " + _presence(pattern, ran)
    for pattern in expect.not_skipped:
        if not any(fnmatchcase(no, pattern) for no in ran):
            yield f"did not run: task {pattern} " + _presence(pattern, skipped)


def _presence(pattern: str, elsewhere: set[str]) -> str:
    if any(fnmatchcase(no, pattern) for no in elsewhere):
        return "(it is in the task tree)"
    return "(no such task in the tree)"


def _calls(expect: Expect, stats: Mapping[str, Any]) -> Iterator[str]:
    by_purpose = stats.get("by_purpose") or {}
    for purpose, bound in expect.llm_calls:
        if purpose == "total":
            calls = int(stats.get("llm_calls", 0))
        else:
            calls = int((by_purpose.get(purpose) or {}).get("calls", 0))
        if not bound.admits(calls):
            yield f"LLM calls for {purpose}: expected {bound}, got {calls}" + _by_task(
                stats, purpose
            )


def _by_task(stats: Mapping[str, Any], purpose: str) -> str:
    """Which tasks the calls were made for: " (task 1: 1, task 1.2: 2)"."""
    counts = []
    for task, entry in (stats.get("by_task") or {}).items():
        calls = entry.get("calls", 0) if purpose == "total" else entry["by_purpose"].get(purpose)
        if calls:
            counts.append(f"task {task}: {calls}")
    return f" ({', '.join(counts)})" if counts else ""


def _retrieved(expect: Expect, retrievals: Sequence[Retrieval]) -> Iterator[str]:
    """`retrieved`: some run of the tool returned the page within its first `top` pages."""
    for wanted in expect.retrieved:
        runs = [r for r in retrievals if _same_tool(wanted.tool, r.tool)]
        if not runs:
            ran = sorted({r.tool for r in retrievals}) or ["none"]
            yield f"retrieved: {wanted.tool} ran no retrieval (retrievals by: {', '.join(ran)})"
            continue
        if not any(_retrieved_in(wanted, run.pages) for run in runs):
            got = "; ".join(
                ", ".join(_place_label(p.document, p.heading, p.page) for p in run.pages)
                or "no page"
                for run in runs
            )
            yield f"not retrieved: {wanted} (it returned {got})"


def _retrieved_in(wanted: RetrievedExpect, pages: Sequence[RankedPage]) -> bool:
    shown = pages if wanted.top is None else pages[: wanted.top]
    source = SourceExpect(wanted.document, wanted.page)
    return any(
        _same_place(source, page.document, page.page, [page.heading, *(page.headings or ())])
        for page in shown
    )


def _same_tool(wanted: str, actual: str) -> bool:
    return wanted == actual or wanted.rsplit(".", 1)[-1] == actual.rsplit(".", 1)[-1]


# --- reading the task tree ------------------------------------------------------------------


def walk(task: Mapping[str, Any] | None) -> Iterator[Mapping[str, Any]]:
    """The tree's tasks, depth-first in list order."""
    if task is None:
        return
    yield task
    for child in task.get("children", ()):
        yield from walk(child)


def tool_runs(task: Mapping[str, Any] | None) -> Iterator[tuple[str, str]]:
    """(completion key, status) of every tool run in the tree."""
    for node in walk(task):
        for tool in node.get("tools", ()):
            yield str(tool["key"]), str(tool.get("status", ""))


def calls_summary(stats: Mapping[str, Any]) -> str:
    """`suitability 1, tool 2, answer 1 (4 in all)`."""
    by_purpose = stats.get("by_purpose") or {}
    parts = [f"{purpose} {entry.get('calls', 0)}" for purpose, entry in by_purpose.items()]
    return f"{', '.join(parts) or 'none'} ({stats.get('llm_calls', 0)} in all)"
