"""Embedding runtimes side by side on the Python docs: runner's numpy forward pass, onnxruntime
on the model's float32 weights, onnxruntime on int8 weights (runner/embedding/models.py).

    python -m bench.embed_runtimes            # writes bench/results/embed_runtimes.json
    python -m bench.embed_runtimes 400        # fewer pages (default 2,000)

Pages are runner's own (max_words 250, up to 256 word pieces each): the gold pages of the
pydocs question sets, then pages spread evenly over the corpus up to the count. Speed: the pages
in chunks of 250, each chunk embedded by every runtime in turn, so that other work on a shared
machine slows all three alike; the ratios are the figures to read. Quality: each runtime's
vectors against numpy's (cosine per page), and the questions of both pydocs sets ranked over
these pages by each runtime (recall of the gold page, and agreement with numpy's ranking).
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from bench.readme import table, write_results, write_section
from bench.retrieval import MAX_WORDS, PYDOCS, machine
from bench.wording import Recall, gold_rows, read_set

MODEL = "all-MiniLM-L6-v2"
RUNTIMES = ("numpy", "onnx", "onnx-int8")
QUESTION_SETS = ("pydocs-users", "pydocs-faq-headings")
CHUNK = 250
TITLE = "Embedding runtimes: numpy and onnxruntime"
# what the `embed` extra's onnxruntime and onnx bring (numpy is there already)
ONNX_DISTRIBUTIONS = ("onnxruntime", "onnx", "protobuf", "flatbuffers", "ml_dtypes")


def corpus_pages(count: int) -> tuple[list[Any], list[Any]]:
    """`count` pages of pydocs, the question sets' gold pages first; and the questions."""
    from runner.retrieval.pages import corpus_files, paginate, read_document

    pages = [
        page
        for path in corpus_files(PYDOCS, ["**/*.rst.txt"])
        for page in paginate(read_document(PYDOCS, path), MAX_WORDS)
    ]
    questions = [question for name in QUESTION_SETS for question in read_set(name)]
    chosen = sorted({row for question in questions for row in gold_rows(pages, question)})
    step = max(1, len(pages) // count)
    for row in range(0, len(pages), step):
        if len(chosen) >= count:
            break
        if row not in chosen:
            chosen.append(row)
    return [pages[row] for row in chosen[:count]], questions


def load_runtimes(cache: Path) -> tuple[dict[str, Any], dict[str, float]]:
    """Each runtime's embedder, and how long a first use took (building the ONNX graph)."""
    from runner.embedding.catalog import locate
    from runner.embedding.models import Embedder

    os.environ["RUNNER_CACHE_DIR"] = str(cache)
    embedders, seconds = {}, {}
    for runtime in RUNTIMES:
        started = time.perf_counter()
        embedders[runtime] = Embedder(MODEL, locate(MODEL), runtime)
        seconds[runtime] = round(time.perf_counter() - started, 1)
    return embedders, seconds


def timed_vectors(
    embedders: dict[str, Any], texts: list[str]
) -> tuple[dict[str, np.ndarray], dict[str, float]]:
    """Every runtime's vectors of the texts, embedded chunk by chunk in turn, and its seconds."""
    parts: dict[str, list[np.ndarray]] = {runtime: [] for runtime in embedders}
    seconds = dict.fromkeys(embedders, 0.0)
    for start in range(0, len(texts), CHUNK):
        chunk = texts[start : start + CHUNK]
        for runtime, embedder in embedders.items():
            began = time.perf_counter()
            parts[runtime].append(embedder.embed(chunk))
            seconds[runtime] += time.perf_counter() - began
        print(f"{start + len(chunk)} pages: {seconds}", file=sys.stderr, flush=True)
    return {runtime: np.concatenate(vectors) for runtime, vectors in parts.items()}, seconds


def ranking_figures(
    embedders: dict[str, Any],
    vectors: dict[str, np.ndarray],
    pages: list[Any],
    questions: list[Any],
) -> dict[str, dict[str, float]]:
    """Per runtime: recall@1/@5 of the gold page among these pages, and against numpy's own
    ranking: the share of questions with the same first page, the mean overlap of the top 5."""
    tops: dict[str, list[list[int]]] = {}
    figures = {}
    for runtime, embedder in embedders.items():
        queries = embedder.embed([question.text for question in questions])
        ranked = np.argsort(-(queries @ vectors[runtime].T), axis=1)[:, :5]
        tops[runtime] = ranked.tolist()
        recall = Recall()
        for question, top in zip(questions, tops[runtime], strict=True):
            recall.add(top, gold_rows(pages, question))
        figures[runtime] = recall.figures()
    for runtime, ranked_lists in tops.items():
        pairs = list(zip(ranked_lists, tops["numpy"], strict=True))
        figures[runtime] |= {
            "same_first_as_numpy": round(sum(a[0] == b[0] for a, b in pairs) / len(pairs), 3),
            "top5_overlap_with_numpy": round(
                sum(len(set(a) & set(b)) for a, b in pairs) / (5 * len(pairs)), 3
            ),
        }
    return figures


def installed_mb(distributions: tuple[str, ...]) -> float:
    total = 0
    for name in distributions:
        files = importlib.metadata.distribution(name).files or []
        paths = [Path(file.locate()) for file in files]
        total += sum(path.stat().st_size for path in paths if path.is_file())
    return round(total / 2**20, 1)


def main(argv: list[str] | None = None) -> None:
    args = argv or []
    count = int(args[0]) if args else 2000
    pages, questions = corpus_pages(count)
    texts = [page.text for page in pages]
    with tempfile.TemporaryDirectory(prefix="runner-onnx-cache-") as cache:
        embedders, first_use = load_runtimes(Path(cache))
        graph_mb = {
            path.stem.rsplit("-", 1)[-1]: round(path.stat().st_size / 2**20, 1)
            for path in (Path(cache) / "embedding").glob("*.onnx")
        }
        vectors, seconds = timed_vectors(embedders, texts)
        ranking = ranking_figures(embedders, vectors, pages, questions)
    runtimes = {}
    for runtime in RUNTIMES:
        cosine = (vectors[runtime] * vectors["numpy"]).sum(1)
        rate = len(texts) / seconds[runtime]
        runtimes[runtime] = {
            "seconds": round(seconds[runtime], 1),
            "pages_per_second": round(rate, 1),
            "speed_vs_numpy": round(seconds["numpy"] / seconds[runtime], 2),
            "minutes_for_10k_pages": round(10_000 / rate / 60, 1),
            "first_use_seconds": first_use[runtime],
            "cosine_with_numpy": {
                "mean": round(float(cosine.mean()), 6),
                "min": round(float(cosine.min()), 6),
            },
            "questions": ranking[runtime],
        }
    results = {
        "date": time.strftime("%Y-%m-%d"),
        "command": "python -m bench.embed_runtimes" + (f" {count}" if args else ""),
        "machine": machine() | {"openblas": _openblas_settings()},
        "pages": len(texts),
        "tokens_per_page_mean": _mean_tokens(embedders["numpy"], texts),
        "questions": len(questions),
        "onnx_graph_mb": graph_mb,
        "onnx_install_mb": installed_mb(ONNX_DISTRIBUTIONS),
        "runtimes": runtimes,
    }
    write_results("embed_runtimes", results)
    write_section(TITLE, readme_section(results))
    print(json.dumps(results, indent=2))


def _openblas_settings() -> str:
    names = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
    return ", ".join(f"{name}={os.environ.get(name, 'unset')}" for name in names)


def _mean_tokens(embedder: Any, texts: list[str]) -> float:
    encoded = embedder.tokenizer.encode_batch(texts)  # padded to the longest: count the mask
    return round(float(np.mean([sum(item.attention_mask) for item in encoded])))


def readme_section(results: dict[str, Any]) -> str:
    machine_line = ", ".join(f"{key} {value}" for key, value in results["machine"].items())
    rows = []
    for runtime, figures in results["runtimes"].items():
        cosine, asked = figures["cosine_with_numpy"], figures["questions"]
        rows.append(
            [
                runtime,
                f"{figures['pages_per_second']} ({figures['speed_vs_numpy']}×)",
                f"{figures['minutes_for_10k_pages']} min",
                f"{cosine['mean']:.5f} / {cosine['min']:.5f}",
                f"{asked['at1']} / {asked['at5']}",
                f"{asked['same_first_as_numpy']} / {asked['top5_overlap_with_numpy']}",
                f"{figures['first_use_seconds']} s",
            ]
        )
    header = [
        "runtime",
        "pages/s (× numpy)",
        "10k pages",
        "cosine with numpy: mean / min",
        "gold @1 / @5",
        "numpy's first / top-5 overlap",
        "first use",
    ]
    graphs = ", ".join(f"{variant} {mb} MB" for variant, mb in results["onnx_graph_mb"].items())
    return f"""`{results["command"]}` ({results["date"]}; {machine_line}). all-MiniLM-L6-v2 on
{results["pages"]:,} pages of the Python docs (runner's pages, max_words 250, a mean of
{results["tokens_per_page_mean"]} word pieces), embedded in chunks of {CHUNK} by each runtime in
turn (one batch a core, one thread each), so that the other work of a shared machine slows all
three alike: read the ratios. The {results["questions"]} questions of the pydocs sets are ranked
over the same pages ("gold": the gold section's page among the first 1 / 5; then agreement with
numpy's ranking). "First use" builds the ONNX graph from the weights (and quantizes it) into the
cache; later loads read it ({graphs}). onnxruntime and onnx add
{results["onnx_install_mb"]} MB installed. Raw figures: `bench/results/embed_runtimes.json`.

{table(header, rows)}
"""


if __name__ == "__main__":
    main(sys.argv[1:])
