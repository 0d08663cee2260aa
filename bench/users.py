"""Questions in users' words: BM25, embeddings and hybrid search side by side, on the question
sets of bench/questions/ (pydocs and the PostgreSQL manual in users' words, the Python FAQ's
own headings; the held-out corpus, never used to tune runner: the Perl FAQ in users' words and
in its own headings, asked of the whole Perl manual), with LlamaIndex's VectorStoreIndex on the
same model as the anchor.

    python -m bench.users            # writes bench/results/users.json and its README section
    python -m bench.users pgdocs     # one corpus; the others keep the figures of their last run
    python -m bench.users perldocs   # the held-out corpus (bench/fetch-perldocs.sh downloads it)

Per set and ranking: recall@1 / @5 of the gold section (bench/wording.py), query latency; per
corpus: the page-vector build (time, pages/s, size); for BM25 and hybrid, gold among the
sources of the answer a pipeline gives (a `retrieve` tool, top 5, the offline provider). The
fusion study (score fusion, weighted RRF, a cascade: bench/rankers.py) is what chose runner's
hybrid weights (docs/retrieval.md).

Embedding a corpus takes minutes, so the indexes are kept between runs in
`$TMPDIR/runner-bench-users/` (RUNNER_BENCH_USERS_STATE moves it); the figures of the build
are those of the run that built them, kept in the vectors' model.json.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from bench.rankers import (
    best,
    bm25_scores,
    cascade,
    minmax_fusion,
    rm3_scores,
    rrf,
    score_fusion,
    vector_feedback,
)
from bench.readme import read_results, table, write_results, write_section
from bench.retrieval import PYDOCS, ROOT, folder_size, machine
from bench.wording import SETS, Recall, gold_rows, read_set

MODEL = "all-MiniLM-L6-v2"
# the corpora downloaded into a temporary folder: the script that fetches one, the folder
DOWNLOADS = {
    "pgdocs": (ROOT.parent / "shared" / "data" / "fetch-pgdocs.sh", "runner-bench-pgdocs"),
    "perldocs": (ROOT / "bench" / "fetch-perldocs.sh", "runner-bench-perldocs"),
}
TOP_K = 5
TITLE = "Questions in users' words"
# corpora whose question sets were written after runner's retrieval was tuned, and never used
# to tune it: how runner does on documentation it was not tuned on
HELD_OUT = {
    "perldocs": "the Perl 5.36 manual, Debian's perl-doc as HTML from bench/fetch-perldocs.sh, "
    "asked the Perl FAQ's entries in users' words, `perlfaq-users`, and in their own headings, "
    "`perlfaq-headings`",
}


def state_base() -> Path:
    default = Path(tempfile.gettempdir()) / "runner-bench-users"
    return Path(os.environ.get("RUNNER_BENCH_USERS_STATE", default))


def corpus_source(name: str) -> tuple[Path, str] | str:
    """The corpus folder and its include glob, or why it is not there."""
    if name == "pydocs":
        return (PYDOCS, "**/*.rst.txt") if PYDOCS.is_dir() else f"no pydocs at {PYDOCS}"
    script, folder = DOWNLOADS[name]
    download = Path(tempfile.gettempdir()) / folder
    done = subprocess.run(
        ["bash", str(script), str(download)], capture_output=True, text=True, check=False
    )
    html = download / "html"
    if done.returncode != 0 or not html.is_dir():
        return (done.stderr or done.stdout).strip() or f"{script.name} failed"
    return html, "**/*.html"


PIPELINE = """\
version: 1
domain: {name}
llm: {{provider: offline}}
corpora:
  {name}:
    path: docs
    follow_symlinks: true
    include: ["{include}"]
    pages: {{max_words: 250}}
    embedding: {{model: {model}}}
retrieval_tool: rag
tools:
  - {{name: rag, kind: retrieve, corpus: {name}, top_k: {k}, mode: MODE}}
"""


def pipeline_file(name: str, folder: Path, include: str, mode: str) -> Path:
    state = state_base() / f"state-{name}"
    state.mkdir(parents=True, exist_ok=True)
    if not (state / "docs").exists():
        (state / "docs").symlink_to(folder)
    path = state / f"{mode}.yaml"
    text = PIPELINE.format(name=name, include=include, model=MODEL, k=TOP_K)
    path.write_text(text.replace("MODE", mode) + "state_dir: .\n", encoding="utf-8")
    return path


def open_index(path: Path, name: str) -> tuple[Any, dict[str, Any]]:
    from runner.config import load_pipeline
    from runner.retrieval import open_corpus
    from runner.retrieval.vectors import MODEL_FILE, model_folder

    started = time.perf_counter()
    index = open_corpus(load_pipeline(path), name)
    seconds = time.perf_counter() - started
    vectors = model_folder(index.folder, MODEL)
    stored = json.loads((vectors / MODEL_FILE).read_text(encoding="utf-8"))
    embedded, embed_seconds = stored.get("embedded"), stored.get("embed_seconds")
    assert index.vectors is not None, "the corpus searches by meaning: its index keeps vectors"
    build = {
        "pages": len(index),
        "open_seconds": None if index.status.rebuilt else round(seconds, 3),
        "vectors_mb": round(folder_size(vectors) / 2**20, 1),
        "bm25_mb": round(folder_size(index.folder / "bm25") / 2**20, 1),
        # the last build's embedding (kept between runs, see the module's docstring)
        "precision": index.vectors.precision,  # of the stored vectors, and so of the queries
        "embedded": embedded,
        "embed_seconds": embed_seconds,
        "pages_per_second": round(embedded / embed_seconds, 1)
        if embedded and embed_seconds
        else None,
    }
    return index, build


# --- rankings ------------------------------------------------------------------------------


def rankings(index: Any, pages: list[Any], question: str, vector: np.ndarray) -> dict[str, Any]:
    """Every ranking of the study for one question: page rows, best first."""
    from runner.retrieval.fusion import hybrid_top

    keyword = index.keyword
    bm25 = bm25_scores(keyword, question)
    cosine = index.vectors.scores(vector)
    positive = [row for row in best(bm25) if bm25[row] > 0]
    rm3 = rm3_scores(
        keyword,
        lambda row: f"{pages[row].heading}\n{pages[row].text}",
        question,
        bm25,
        documents=5,
        terms=5,
        original_weight=0.7,
    )
    rows = {page.node_id: row for row, page in enumerate(pages)}

    def searched(mode: str, rerank: bool = True) -> list[int]:  # runner's: sections first
        found = index.search(question, 10, mode=mode, rerank=rerank)
        return [rows[hit.page.node_id] for hit in found]

    return {
        "BM25": searched("keyword"),
        "BM25, pages in score order": positive,
        "BM25 + RM3": [row for row in best(rm3) if rm3[row] > 0],
        "embeddings": best(cosine),
        "hybrid (runner)": searched("hybrid"),
        "hybrid, no rerank": searched("hybrid", rerank=False),
        "hybrid, pages in score order": [
            row for row, _ in hybrid_top(keyword, index.vectors, question, vector, 10)
        ],
        "RRF, equal weights": rrf(bm25, cosine, 0.5),
        "RRF, BM25 0.3": rrf(bm25, cosine, 0.3),
        "RRF, BM25 0.4": rrf(bm25, cosine, 0.4),
        **{
            f"score fusion, BM25 {weight}": score_fusion(bm25, cosine, weight)
            for weight in (0.1, 0.2, 0.3, 0.4, 0.5)
        },
        "min-max fusion, BM25 0.3": minmax_fusion(bm25, cosine, 0.3),
        "min-max fusion, BM25 0.5": minmax_fusion(bm25, cosine, 0.5),
        "cascade, BM25 top 50 by cosine": cascade(bm25, cosine, 50),
        "cascade, BM25 top 200 by cosine": cascade(bm25, cosine, 200),
        "score fusion 0.2, vector feedback from its first 3": vector_feedback(
            bm25, cosine, index.vectors.vectors, vector
        ),
    }


class Anchor:
    """LlamaIndex's VectorStoreIndex over runner's pages with the same vectors (given to it,
    not embedded again) and the same model for the queries."""

    def __init__(self, index: Any, pages: list[Any], folder: Path) -> None:
        from llama_index.core import StorageContext, VectorStoreIndex
        from llama_index.core.embeddings import BaseEmbedding

        from runner.embedding.models import load_embedder, runtime_for
        from runner.retrieval.pages import to_nodes

        # the queries on the weights of the pages' precision, as runner's own search embeds them
        embedder = load_embedder(MODEL, runtime_for(index.vectors.precision))

        class RunnerEmbedding(BaseEmbedding):
            def _get_query_embedding(self, query: str) -> list[float]:
                return embedder.embed([query])[0].tolist()

            def _get_text_embedding(self, text: str) -> list[float]:
                return embedder.embed([text])[0].tolist()

            async def _aget_query_embedding(self, query: str) -> list[float]:
                return self._get_query_embedding(query)

        nodes = to_nodes(pages)
        for node, vector in zip(nodes, np.asarray(index.vectors.vectors), strict=True):
            node.embedding = vector.tolist()
        started = time.perf_counter()
        built = VectorStoreIndex(nodes, embed_model=RunnerEmbedding(model_name=MODEL))
        built.storage_context.persist(persist_dir=str(folder))
        self.build_seconds = time.perf_counter() - started
        self.size_mb = folder_size(folder) / 2**20
        started = time.perf_counter()
        context = StorageContext.from_defaults(persist_dir=str(folder))
        from llama_index.core import load_index_from_storage

        loaded = load_index_from_storage(context, embed_model=RunnerEmbedding(model_name=MODEL))
        self.open_seconds = time.perf_counter() - started
        self.retriever = loaded.as_retriever(similarity_top_k=10)
        self.rows = {page.node_id: row for row, page in enumerate(pages)}

    def rank(self, question: str) -> list[int]:
        return [self.rows[hit.node.node_id] for hit in self.retriever.retrieve(question)]


def timed(function: Any, *args: Any) -> tuple[Any, float]:
    started = time.perf_counter()
    result = function(*args)
    return result, (time.perf_counter() - started) * 1000


def measure_set(name: str, index: Any, pages: list[Any], anchor: Anchor) -> dict[str, Any]:
    questions = read_set(name)
    recalls: dict[str, Recall] = {}
    latency: dict[str, list[float]] = {
        "BM25": [],
        "hybrid (runner)": [],
        "hybrid, no rerank": [],
        "anchor": [],
    }
    for question in questions:
        golds = gold_rows(pages, question)
        vector = index.query_vector(question.text)
        for method, rows in rankings(index, pages, question.text, vector).items():
            recalls.setdefault(method, Recall()).add(rows, golds)
        rows, ms = timed(anchor.rank, question.text)
        recalls.setdefault("LlamaIndex VectorStoreIndex (anchor)", Recall()).add(rows, golds)
        latency["anchor"].append(ms)
        latency["BM25"].append(timed(index.search, question.text, TOP_K)[1])
        for method, rerank in (("hybrid (runner)", True), ("hybrid, no rerank", False)):
            index._last_query = None  # each timing embeds the question, as a new question does
            latency[method].append(
                timed(
                    lambda q, rerank=rerank: index.search(q, TOP_K, mode="hybrid", rerank=rerank),
                    question.text,
                )[1]
            )
    return {
        "questions": len(questions),
        "recall": {method: recall.figures() for method, recall in recalls.items()},
        "latency_p50_ms": {key: round(statistics.median(v), 1) for key, v in latency.items()},
    }


async def sourced(path: Path, name: str, pages: list[Any]) -> float:
    """Share of the questions whose gold section is among the answer's sources."""
    from runner.app import Runtime
    from runner.sessions import SessionStore

    runtime = Runtime.open(path, build_indexes=False)
    rows = {page.node_id: row for row, page in enumerate(pages)}
    hits = 0
    questions = read_set(name)
    with SessionStore(path.with_suffix(".sessions.sqlite")) as store:
        for question in questions:
            result = await runtime.conversation(store).say(question.text)
            golds = gold_rows(pages, question)
            cited = {rows.get(f"{source.document}#{source.page}") for source in result.sources}
            hits += bool(cited & golds)
    runtime.close()
    return round(hits / len(questions), 3)


def measure_corpus(corpus: str) -> dict[str, Any]:
    source = corpus_source(corpus)
    if isinstance(source, str):
        return {"skipped": source}
    folder, include = source
    paths = {mode: pipeline_file(corpus, folder, include, mode) for mode in ("keyword", "hybrid")}
    index, build = open_index(paths["hybrid"], corpus)
    pages = index.pages()
    with tempfile.TemporaryDirectory(prefix="runner-anchor-") as anchor_folder:
        anchor = Anchor(index, pages, Path(anchor_folder))
        sets = {
            name: measure_set(name, index, pages, anchor)
            for name, of in SETS.items()
            if of == corpus
        }
    for name in sets:
        sets[name]["gold_among_sources"] = {
            mode: asyncio.run(sourced(path, name, pages)) for mode, path in paths.items()
        }
    anchor_figures = {
        "build_seconds": round(anchor.build_seconds, 1),
        "size_mb": round(anchor.size_mb, 1),
        "open_seconds": round(anchor.open_seconds, 2),
    }
    return {
        "date": time.strftime("%Y-%m-%d"),
        "held_out": corpus in HELD_OUT,
        "build": build,
        "anchor": anchor_figures,
        "sets": sets,
    }


def per_corpus(
    benchmark: str, measure: Callable[[str], dict[str, Any]], only: list[str] | None
) -> dict[str, Any]:
    """Every corpus measured, or those named (the others keep the figures of the benchmark's
    last run)."""
    previous = (read_results(benchmark) or {}).get("corpora", {})
    return {
        corpus: measure(corpus) if not only or corpus in only else previous[corpus]
        for corpus in dict.fromkeys(SETS.values())
        if not only or corpus in only or corpus in previous
    }


def main(only: list[str] | None = None) -> None:
    """Every corpus, or those named (the others keep their figures of the last run)."""
    host = machine()
    corpora = per_corpus("users", measure_corpus, only)
    results = {
        "date": time.strftime("%Y-%m-%d"),
        "command": "python -m bench.users",
        "machine": host,
        "model": MODEL,
        "top_k": TOP_K,
        "corpora": corpora,
    }
    write_results("users", results)
    write_section(TITLE, readme_section(results))
    print(json.dumps(results, indent=2))


MAIN_ROWS = (
    "BM25",
    "BM25 + RM3",
    "embeddings",
    "hybrid, no rerank",
    "hybrid (runner)",
    "LlamaIndex VectorStoreIndex (anchor)",
)


def weights(build: dict[str, Any]) -> str:
    """On which weights the pages (and so the questions) were embedded, where it was recorded."""
    precision = build.get("precision")
    return f" on the model's {precision} weights" if precision else ""


def readme_section(results: dict[str, Any]) -> str:
    machine_line = ", ".join(f"{key} {value}" for key, value in results["machine"].items())
    parts = [
        f"`python -m bench.users` ({results['date']}; {machine_line}). The question sets of "
        "`bench/questions/` (how they were written: its README) asked of the whole corpus; a "
        "question is found when a page of its gold section is first (@1) or among the first "
        f"five (@5). Model: {results['model']}. The BM25 and hybrid "
        "rows are runner's own searches, which give the best page of each section first "
        "(docs/retrieval.md); `hybrid (runner)` reranks the first 20 candidates word by word "
        "(`embedding.rerank`, its default), `hybrid, no rerank` does not; the study's rows rank "
        "pages in score order. Not in these tables: "
        "`+ rewrite` with SmolLM2-135M (its own section below: `python -m bench rewrite`), and "
        "`synonyms:` "
        "(a list written for these questions would be tuned to them). Raw figures: "
        "`bench/results/users.json`."
    ]
    for corpus, figures in results["corpora"].items():
        if "skipped" in figures:
            parts.append(f"**{corpus}**: skipped ({figures['skipped']}).")
            continue
        build, anchor = figures["build"], figures["anchor"]
        embedding = (
            f"the last build embedded {build['embedded']:,} pages in {build['embed_seconds']} s "
            f"({build['pages_per_second']} pages/s){weights(build)}"
            if build.get("embedded")
            else "the vectors predate the record of their build's time (docs/retrieval.md gives it)"
        )
        held_out = (
            f"the held-out corpus, never used to tune runner: {HELD_OUT[corpus]}; "
            if figures.get("held_out")
            else ""
        )
        measured = f"measured {figures['date']}; " if "date" in figures else ""
        parts.append(
            f"**{corpus}** ({held_out}{measured}{build['pages']:,} pages): page vectors "
            f"{build['vectors_mb']} MB "
            f"beside BM25's {build['bm25_mb']} MB; {embedding}; the anchor's index "
            f"{anchor['size_mb']} MB, built in {anchor['build_seconds']} s from the same vectors, "
            f"opened in {anchor['open_seconds']} s."
        )
        for name, found in figures["sets"].items():
            recall, sources = found["recall"], found["gold_among_sources"]
            latency = found["latency_p50_ms"]
            rows = []
            for method in (method for method in MAIN_ROWS if method in recall):
                source = {"BM25": sources["keyword"], "hybrid (runner)": sources["hybrid"]}
                query = {
                    "BM25": latency["BM25"],
                    "hybrid (runner)": latency["hybrid (runner)"],
                    "hybrid, no rerank": latency.get("hybrid, no rerank"),
                    "LlamaIndex VectorStoreIndex (anchor)": latency["anchor"],
                }
                rows.append(
                    [
                        method,
                        f"{recall[method]['at1']:.3f}",
                        f"{recall[method]['at5']:.3f}",
                        f"{source[method]:.3f}" if method in source else "",
                        f"{query[method]} ms" if query.get(method) is not None else "",
                    ]
                )
            header = [
                "ranking",
                "gold @1",
                "gold @5",
                "gold among the answer's sources",
                "query p50",
            ]
            study = [
                [method, f"{r['at1']:.3f}", f"{r['at5']:.3f}"]
                for method, r in recall.items()
                if method not in MAIN_ROWS
            ]
            parts.append(
                f"*{name}* ({found['questions']} questions)\n\n{table(header, rows)}\n\n"
                f"The fusion study on the same questions:\n\n"
                f"{table(['fusion', 'gold @1', 'gold @5'], study)}"
            )
    return "\n\n".join(parts) + "\n"


if __name__ == "__main__":
    main(sys.argv[1:])
