"""Retrieval you can see: the ranked pages a retrieval-kind tool returned, as one record.

Every `retrieve`, `search` and `neighbor_search` run adds a `retrieval` event to the round's
trace (`{tool, corpus, query, pages: [{rank, document, page, heading, score}]}`, a page of
several sections with its `headings` too); `runner run
--json` lists those events under `retrieval`, `runner run --show-retrieval` prints them,
`runner explain --session` shows them per round and test cases assert on them (`retrieved:`).
A neighbour search ranks its pages in the order it found them and gives no score (null).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from runner.retrieval.index import ScoredPage
from runner.retrieval.pages import Page

EVENT = "retrieval"


def ranked(hits: Iterable[ScoredPage | Page]) -> list[dict[str, Any]]:
    """The pages best first, each `{rank, document, page, heading, score}` (rank from 1)."""
    rows = []
    for rank, hit in enumerate(hits, 1):
        page = hit.page if isinstance(hit, ScoredPage) else hit
        score = round(hit.score, 4) if isinstance(hit, ScoredPage) else None
        row = {
            "rank": rank,
            "document": page.document,
            "page": page.page,
            "heading": page.heading,
            "score": score,
        }
        if page.headings:  # a page of several sections answers for each (pages.py)
            row["headings"] = list(page.headings)
        rows.append(row)
    return rows


# what an event may add (a retrieve tool's): its restatement, what it searched, the parts of
# the question it searched on their own, its evidence
OPTIONAL = ("rewritten", "searched", "parts", "evidence")


def retrieval_events(events: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The `retrieval` events of a trace, each `{task, tool, corpus, query, pages}` and, where
    the event has them, `rewritten`, `searched`, `parts` and `evidence`."""
    return [
        {key: event.get(key) for key in ("task", "tool", "corpus", "query", "pages")}
        | {key: event[key] for key in OPTIONAL if key in event}
        for event in events
        if event.get("event") == EVENT
    ]


def format_retrievals(retrievals: Sequence[Mapping[str, Any]], *, indent: str = "") -> str:
    """Retrievals for people: a line per retrieval, then a line per page."""
    lines: list[str] = []
    for record in retrievals:
        pages = record.get("pages") or []
        task = f" (task {record['task']})" if record.get("task") else ""
        lines.append(
            f"{indent}{record.get('tool')}{task} on {record.get('corpus')}: "
            f"{record.get('query')!r} → {len(pages)} page{'' if len(pages) == 1 else 's'}"
        )
        if record.get("searched"):
            lines.append(f"{indent}  searched as {record['searched']!r}")
        for part in record.get("parts") or ():
            lines.append(f"{indent}  a part its first pages left out, searched too: {part!r}")
        if isinstance(record.get("evidence"), Mapping):
            lines.append(f"{indent}  {_evidence_line(record['evidence'])}")
        for row in pages:
            score = "" if row.get("score") is None else f"  score {row['score']:.3f}"
            heading = f"  {row['heading']}" if row.get("heading") else ""
            lines.append(
                f"{indent}  {row['rank']:>2}. {row['document']} p. {row['page']}{score}{heading}"
            )
    return "\n".join(lines)


def _evidence_line(evidence: Mapping[str, Any]) -> str:
    ranking = evidence.get("ranking") or "keyword"  # the search's own (runner.tools.evidence)
    return (
        f"evidence for the gatekeeper: cosine {evidence.get('first_page_cosine')} with the first "
        f"{ranking} page, {evidence.get('agreement')} of its {evidence.get('top_k')} keyword pages "
        "among the vectors' best"
    )
