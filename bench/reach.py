"""How far reordering can reach: where the gold section stands in each search's first pages.

A reranker only reorders the pages a search hands it (`embedding.rerank`: the first 20), so the
share of questions whose gold section is among a search's first N pages bounds what any
reranker of those N can put into the top 5. This measures that share for BM25, the page vectors
and hybrid search (runner's own searches, unreranked, the best page of each section first) at
5, 10, 20 and 50 pages, on every question set of bench/questions/, beside what runner's
reranked hybrid search puts in its top 5.

    python -m bench.reach            # writes bench/results/reach.json and its README section
    python -m bench.reach pgdocs     # one corpus; the others keep the figures of their last run

It searches the indexes bench.users keeps (RUNNER_BENCH_USERS_STATE), building them if missing.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Sequence
from typing import Any

from bench.readme import table, write_results, write_section
from bench.retrieval import machine
from bench.users import HELD_OUT, corpus_source, open_index, per_corpus, pipeline_file
from bench.wording import SETS, gold_rows, read_set

DEPTHS = (5, 10, 20, 50)
SEARCHES = {"BM25": "keyword", "page vectors": "vector", "hybrid": "hybrid"}
TITLE = "How far reordering can reach"


def first_gold(ranked: Sequence[int], golds: set[int]) -> int | None:
    """The 1-based place of the first gold page, or None when none is among them."""
    return next((place for place, row in enumerate(ranked, 1) if row in golds), None)


def shares(places: Sequence[int | None], depths: Sequence[int] = DEPTHS) -> dict[str, float]:
    """Per depth, the share of the questions whose gold stands at or before it."""
    count = max(len(places), 1)
    return {
        str(depth): round(sum(p is not None and p <= depth for p in places) / count, 3)
        for depth in depths
    }


def measure_set(name: str, index: Any, pages: Sequence[Any]) -> dict[str, Any]:
    questions = read_set(name)
    rows = {page.node_id: row for row, page in enumerate(pages)}
    places: dict[str, list[int | None]] = {search: [] for search in SEARCHES}
    reranked: list[int | None] = []
    for question in questions:
        golds = gold_rows(pages, question)
        for search, mode in SEARCHES.items():
            found = index.search(question.text, max(DEPTHS), mode=mode, rerank=False)
            places[search].append(first_gold([rows[hit.page.node_id] for hit in found], golds))
        found = index.search(question.text, 5, mode="hybrid")
        reranked.append(first_gold([rows[hit.page.node_id] for hit in found], golds))
    return {
        "questions": len(questions),
        "within": {search: shares(found) for search, found in places.items()},
        "reranked_hybrid_at5": shares(reranked, (5,))["5"],
    }


def measure_corpus(corpus: str) -> dict[str, Any]:
    source = corpus_source(corpus)
    if isinstance(source, str):
        return {"skipped": source}
    folder, include = source
    index, _ = open_index(pipeline_file(corpus, folder, include, "hybrid"), corpus)
    pages = index.pages()
    sets = {name: measure_set(name, index, pages) for name, of in SETS.items() if of == corpus}
    return {"date": time.strftime("%Y-%m-%d"), "held_out": corpus in HELD_OUT, "sets": sets}


def main(only: list[str] | None = None) -> None:
    """Every corpus, or those named (the others keep their figures of the last run)."""
    results = {
        "date": time.strftime("%Y-%m-%d"),
        "command": "python -m bench.reach",
        "machine": machine(),
        "depths": list(DEPTHS),
        "corpora": per_corpus("reach", measure_corpus, only),
    }
    write_results("reach", results)
    write_section(TITLE, readme_section(results))
    print(json.dumps(results, indent=2))


def readme_section(results: dict[str, Any]) -> str:
    machine_line = ", ".join(f"{key} {value}" for key, value in results["machine"].items())
    depths = results["depths"]
    header = ["question set", "search", *(f"within {depth}" for depth in depths)]
    rows: list[list[Any]] = []
    skipped = []
    for corpus, figures in results["corpora"].items():
        if "skipped" in figures:
            skipped.append(f"**{corpus}**: skipped ({figures['skipped']}).")
            continue
        mark = " (held out)" if figures.get("held_out") else ""
        for name, found in figures["sets"].items():
            label = f"`{name}`{mark} ({found['questions']} q.)"
            for search, within in found["within"].items():
                rows.append([label, search, *(f"{within[str(depth)]:.3f}" for depth in depths)])
                label = ""
            reranked = f"{found['reranked_hybrid_at5']:.3f}"
            rows.append(["", "hybrid, reranked (runner)", reranked, *[""] * (len(depths) - 1)])
    return "\n\n".join(
        [
            f"`python -m bench.reach` ({results['date']}; {machine_line}). The share of each "
            "set's questions whose gold section is among a search's first N pages (runner's "
            "searches, the best page of each section first, not reranked; all-MiniLM-L6-v2's "
            "page vectors, the indexes of `bench.users`), beside what runner's reranked hybrid "
            "search puts in its top 5. A reranker reorders the first 20 (`embedding.rerank`), so "
            "*within 20* is the most any reranker of them could put in the top 5; raising it "
            "takes a first search that finds more, that is a stronger model.",
            table(header, rows),
            *skipped,
        ]
    )


if __name__ == "__main__":
    main(sys.argv[1:])
