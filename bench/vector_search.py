"""Page vectors at 10,000 and 100,000 pages: opening them and exact search.

    python -m bench.vector_search    # writes bench/results/vector_search.json and its section
    python -m bench.vector_search --sizes 200,400   # other sizes (the tests' tiny run)

The vectors are random unit rows of all-MiniLM-L6-v2's width (384): opening and searching cost
the same whatever the values, and embedding 100,000 real pages would take hours here. Each size
is opened by a fresh process (`VectorIndex.load`: a manifest and two memory-mapped arrays), then
searched with random unit queries (the question's own embedding, about 10 ms, is not counted:
bench/users.py measures whole queries). Opening an index with vectors is this on top of opening
its BM25 index (bench/index_open.py).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.readme import table, write_results, write_section
from bench.retrieval import ROOT, folder_size, machine

SIZES = (10_000, 100_000)
DIMENSIONS = 384
QUERIES = 50
MODEL = "bench-random"
TARGET_OPEN_MS = 150  # issue 18: an index with vectors opens in ≤ 150 ms at 100k pages
TARGET_SEARCH_MS = 50  # issue 18: past it, an ANN library would be worth its keep


def write_vectors(folder: Path, pages: int) -> None:
    from runner.retrieval.vectors import KEYS_FILE, MODEL_FILE, VECTORS_FILE, model_folder

    target = model_folder(folder, MODEL)
    target.mkdir(parents=True)
    rows = np.random.default_rng(pages).standard_normal((pages, DIMENSIONS), dtype=np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    np.save(target / VECTORS_FILE, rows)
    np.save(target / KEYS_FILE, np.zeros(pages, dtype="S16"))
    info = {"model": MODEL, "dimensions": DIMENSIONS, "pages": pages}
    (target / MODEL_FILE).write_text(json.dumps(info), encoding="utf-8")


def phase_open(folder: Path) -> dict[str, Any]:
    from runner.retrieval.vectors import VectorIndex

    started = time.perf_counter()
    vectors = VectorIndex.load(folder, MODEL)
    open_ms = (time.perf_counter() - started) * 1000
    assert vectors is not None
    queries = np.random.default_rng(0).standard_normal((QUERIES + 1, DIMENSIONS), dtype=np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    started = time.perf_counter()
    vectors.top(queries[0], 5)
    first_ms = (time.perf_counter() - started) * 1000
    times = []
    for query in queries[1:]:
        started = time.perf_counter()
        vectors.top(query, 5)
        times.append((time.perf_counter() - started) * 1000)
    cuts = statistics.quantiles(times, n=20)
    return {
        "open_ms": round(open_ms, 1),
        "first_search_ms": round(first_ms, 1),
        "search_p50_ms": round(statistics.median(times), 1),
        "search_p95_ms": round(cuts[18], 1),
    }


def main(argv: list[str] | None = None) -> None:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m bench.vector_search")
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)), help="pages, comma-separated")
    args = parser.parse_args(argv or [])
    host = machine()
    sizes = {}
    with tempfile.TemporaryDirectory(prefix="runner-vectors-") as base:
        for pages in (int(size) for size in args.sizes.split(",")):
            folder = Path(base) / str(pages)
            write_vectors(folder, pages)
            command = [sys.executable, "-m", "bench.vector_search", "--phase", str(folder)]
            done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True)
            sizes[str(pages)] = json.loads(done.stdout.strip().splitlines()[-1]) | {
                "size_mb": round(folder_size(folder) / 2**20, 1)
            }
    from bench.readme import read_results

    kept = {
        key: value
        for key, value in (read_results("vector_search") or {}).items()
        if "queries" in key
    }
    results = {
        **kept,
        "date": time.strftime("%Y-%m-%d"),
        "command": "python -m bench.vector_search" + "".join(f" {arg}" for arg in (argv or [])),
        "machine": host,
        "dimensions": DIMENSIONS,
        "sizes": sizes,
        "targets_ms": {"open": TARGET_OPEN_MS, "search": TARGET_SEARCH_MS},
    }
    write_results("vector_search", results)
    write_section("Page vectors: open and exact search", readme_section(results))
    print(json.dumps(results, indent=2))


def readme_section(results: dict[str, Any]) -> str:
    machine_line = ", ".join(f"{key} {value}" for key, value in results["machine"].items())
    rows = [
        [
            f"{int(pages):,} pages",
            f"{figures['size_mb']} MB",
            f"{figures['open_ms']} ms",
            f"{figures['first_search_ms']} ms",
            f"{figures['search_p50_ms']} / {figures['search_p95_ms']} ms",
        ]
        for pages, figures in results["sizes"].items()
    ]
    header = ["vectors", "on disk", "open", "first search", "search p50 / p95"]
    return f"""`{results["command"]}` ({results["date"]}; {machine_line}). Random unit
vectors of {results["dimensions"]} dimensions (what all-MiniLM-L6-v2 gives), opened by a fresh
process and searched exactly (every page's cosine, the best 5). Targets: open ≤
{results["targets_ms"]["open"]} ms beside BM25's open at 100,000 pages; an ANN library only
where exact search passes {results["targets_ms"]["search"]} ms. The first search reads the
file into the page cache (fast here, the file was just written; from a cold disk it is the
file's size at the disk's speed). Raw figures: `bench/results/vector_search.json`.

{table(header, rows)}
"""


# --- hybrid queries on real corpora: the question's embedding and the rerank included --------

QUERIES_TITLE = "Hybrid queries on real corpora"
TARGET_HYBRID_MS = 100  # issue 29: a hybrid query, rerank included, at the median
PYDOCS_QUESTIONS = 60  # the first of pydocs' set: the code before took seconds a query


def support_corpus(folder: Path) -> tuple[Any, list[str]]:
    """The support example's handbook (indexed with its vectors) and its eval questions."""
    import csv
    import shutil

    from runner.config import load_pipeline
    from runner.retrieval import open_corpus

    shutil.copytree(ROOT / "pipelines" / "support", folder, ignore=shutil.ignore_patterns(".*"))
    corpus = open_corpus(load_pipeline(folder / "support.yaml"), "handbook")
    with (folder / "eval" / "questions.csv").open(encoding="utf-8", newline="") as file:
        return corpus, [row["question"] for row in csv.DictReader(file)]


def pydocs_corpus() -> tuple[Any, list[str]] | None:
    """pydocs as bench.users indexes it (its state kept between runs), and its questions in
    users' words; None when bench.users has not built it (nothing is built here)."""
    from bench.users import state_base
    from bench.wording import read_set
    from runner.config import load_pipeline
    from runner.retrieval import open_corpus
    from runner.retrieval.index import IndexMissingError

    path = state_base() / "state-pydocs" / "hybrid.yaml"
    if not path.is_file():
        return None
    try:
        corpus = open_corpus(load_pipeline(path), "pydocs", build=False)
    except IndexMissingError:
        return None
    return corpus, [question.text for question in read_set("pydocs-users")[:PYDOCS_QUESTIONS]]


def query_times(corpus: Any, questions: list[str]) -> dict[str, Any]:
    """Median and p95 ms of a hybrid search (top 5) per question, with the corpus's rerank and
    without; the first search (the model's load) apart."""
    started = time.perf_counter()
    corpus.search(questions[0], 5, mode="hybrid")
    first = (time.perf_counter() - started) * 1000
    figures: dict[str, Any] = {"pages": len(corpus), "first_query_ms": round(first, 1)}
    for name, rerank in (("hybrid, rerank", True), ("hybrid, no rerank", False)):
        times = []
        for question in questions:
            started = time.perf_counter()
            corpus.search(question, 5, mode="hybrid", rerank=rerank)
            times.append((time.perf_counter() - started) * 1000)
        cuts = statistics.quantiles(times, n=20)
        figures[name] = {
            "queries": len(times),
            "p50_ms": round(statistics.median(times), 1),
            "p95_ms": round(cuts[18], 1),
        }
    return figures


def queries_main(label: str, commit: str | None = None) -> None:
    """`label`'s figures beside the other labels'; `commit` names the code measured when it is
    another tree's (PYTHONPATH), by default this tree's HEAD."""
    from bench.readme import read_results

    previous = read_results("vector_search") or {}
    commit = (
        commit
        or subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
    )
    corpora: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="runner-bench-queries-") as base:
        corpora["support handbook"] = query_times(*support_corpus(Path(base) / "support"))
    found = pydocs_corpus()
    if found is not None:
        corpora["pydocs"] = query_times(*found)
    run = {"date": time.strftime("%Y-%m-%d"), "commit": commit, "machine": machine()}
    queries = previous.get("queries", {})
    results = {
        **previous,
        "queries": {**queries, label: run | {"corpora": corpora}},
        "queries_target_ms": TARGET_HYBRID_MS,
    }
    write_results("vector_search", results)
    write_section(QUERIES_TITLE, queries_section(results))
    print(queries_section(results))


def queries_section(results: dict[str, Any]) -> str:
    rows = []
    for label, run in results["queries"].items():
        load = run["machine"].get("load_average_1min", "?")
        for corpus, figures in run["corpora"].items():
            for name in ("hybrid, rerank", "hybrid, no rerank"):
                found = figures[name]
                rows.append(
                    [
                        f"{label} ({run['commit']}, {run['date']}, load {load})",
                        f"{corpus} ({figures['pages']:,} pages, {found['queries']} questions)",
                        name,
                        f"{found['p50_ms']} / {found['p95_ms']} ms",
                        f"{figures['first_query_ms']} ms",
                    ]
                )
    header = ["run", "corpus", "search", "query p50 / p95", "first query"]
    return f"""`python -m bench.vector_search --queries LABEL`: a `hybrid` search (top 5) of each
question of a set, in one process: the question embedded, BM25 and the page vectors fused, and
the first 20 sections reranked word by word (`embedding.rerank`, the default) or not. The
support example's eval questions over its handbook, and pydocs' questions in users' words over
the index bench.users builds. `before` is the code before issue 29's cost work (the model run
over the 20 candidates on every query), `after` this tree (the candidates' word pieces read
from the index). The model is loaded before the first query (the support handbook's index is
built in the same process): the first query is the first search's own cost. Target: ≤
{results["queries_target_ms"]} ms at the median, rerank included.
Raw figures: `bench/results/vector_search.json`.

{table(header, rows)}
"""


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--phase":
        print(json.dumps(phase_open(Path(sys.argv[2]))))
    elif len(sys.argv) in (3, 4) and sys.argv[1] == "--queries":
        queries_main(sys.argv[2], *sys.argv[3:])  # LABEL [COMMIT]
    else:
        main(sys.argv[1:])
