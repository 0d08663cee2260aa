"""What a page's vector should cover: a study of the choices runner did not ship.

all-MiniLM-L6-v2 reads at most 256 word pieces, and runner's pages (`max_words: 250`) are
longer than that: three pages in four of the Python docs (median 411 word pieces), so a page's
vector is of its place and first 256 word pieces. This study embeds every page whole, in
windows of 256 word pieces (32 shared with the window before; each window starts with the
page's place, as the first does) and compares, on the question sets of bench/questions/:

- the first window alone (what runner stores),
- the best window of each page (one vector a window, a page scoring its best),
- the mean of a page's windows (one vector a page),
- the page vector blended with a vector of its place alone (title › heading),

each by itself and in runner's hybrid fusion (0.2 × BM25 over its best + 0.8 × cosine). On
request (`python -m bench page_vectors`): embedding the windows takes about twice as long as
the pages (tens of minutes a corpus here); the window vectors are kept beside bench.users'
indexes between runs.

    python -m bench.page_vectors           # pydocs
    python -m bench.page_vectors pgdocs    # the PostgreSQL manual
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from bench import users
from bench.rankers import best, bm25_scores
from bench.readme import read_results, table, write_results, write_section
from bench.retrieval import machine
from bench.wording import SETS, Recall, gold_rows, read_set

TITLE = "What a page's vector covers"
WINDOW = 256  # word pieces, [CLS] and [SEP] included: the model's own limit
OVERLAP = 32  # word pieces a window shares with the one before
KEYWORD_WEIGHT = 0.2


def place_of(page: Any) -> str:
    return " › ".join(dict.fromkeys(part for part in (page.title, page.heading) if part))


def windows(tokenizer: Any, place: str, text: str) -> list[str]:
    """The page's text in windows of WINDOW word pieces, each after the page's place; the first
    is what runner embeds for the page (its place and text, cut at WINDOW)."""
    whole = f"{place}\n{text}" if place else text
    offsets = tokenizer.encode(whole, add_special_tokens=False).offsets
    body = WINDOW - 2
    if len(offsets) <= body:
        return [whole]
    head = len(tokenizer.encode(f"{place}\n", add_special_tokens=False).ids) if place else 0
    found = [whole[: offsets[body - 1][1]]]
    start, step = body - OVERLAP, body - head - OVERLAP
    while start < len(offsets):
        end = min(start + body - head, len(offsets))
        chunk = whole[offsets[start][0] : offsets[end - 1][1]]
        found.append(f"{place}\n{chunk}" if place else chunk)
        start += step
    return found


def window_vectors(pages: list[Any], folder: Path) -> tuple[np.ndarray, np.ndarray, float | None]:
    """Every page's window vectors (rows in page order) and each page's first row; embedded
    once, then read from `folder`. The seconds it took, when this run embedded them."""
    from tokenizers import Tokenizer

    from runner.embedding.models import load_embedder

    saved, owners_file = folder / "window-vectors.npy", folder / "window-owners.npy"
    if saved.exists() and owners_file.exists():
        owners = np.load(owners_file)
        if owners.max(initial=-1) + 1 == len(pages):
            return np.load(saved), _starts(owners), None
    embedder = load_embedder(users.MODEL)
    tokenizer = Tokenizer.from_str(embedder.tokenizer.to_str())
    tokenizer.no_truncation()
    tokenizer.no_padding()
    texts: list[str] = []
    owner_rows: list[int] = []
    for row, page in enumerate(pages):
        found = windows(tokenizer, place_of(page), page.text)
        texts += found
        owner_rows += [row] * len(found)
    started = time.perf_counter()
    vectors = embedder.embed(texts)
    seconds = time.perf_counter() - started
    owners = np.array(owner_rows)
    np.save(saved, vectors)
    np.save(owners_file, owners)
    return vectors, _starts(owners), seconds


def _starts(owners: np.ndarray) -> np.ndarray:
    return np.r_[0, np.flatnonzero(np.diff(owners)) + 1]


def place_vectors(pages: list[Any]) -> np.ndarray:
    from runner.embedding.models import load_embedder

    places = [place_of(page) for page in pages]
    distinct = list(dict.fromkeys(places))
    vectors = load_embedder(users.MODEL).embed(distinct)
    row = {place: number for number, place in enumerate(distinct)}
    return vectors[[row[place] for place in places]]


def hybrid(cosine: np.ndarray, bm25: np.ndarray) -> np.ndarray:
    top = float(bm25.max())
    return (1 - KEYWORD_WEIGHT) * cosine + (KEYWORD_WEIGHT * bm25 / top if top > 0 else 0.0)


def measure_corpus(corpus: str) -> dict[str, Any]:
    source = users.corpus_source(corpus)
    if isinstance(source, str):
        return {"skipped": source}
    index, _ = users.open_index(users.pipeline_file(corpus, *source, "hybrid"), corpus)
    pages = index.pages()
    windowed, starts, seconds = window_vectors(pages, users.state_base() / f"state-{corpus}")
    first = np.asarray(index.vectors.vectors)
    means = np.add.reduceat(windowed, starts)
    means /= np.linalg.norm(means, axis=1, keepdims=True)
    places = place_vectors(pages)
    cosines: dict[str, Callable[[np.ndarray], np.ndarray]] = {
        "first window (runner)": lambda q: first @ q,
        "best window": lambda q: np.maximum.reduceat(windowed @ q, starts),
        "mean of the windows": lambda q: means @ q,
        "page 0.8 + place 0.2": lambda q: 0.8 * (first @ q) + 0.2 * (places @ q),
    }
    sets: dict[str, Any] = {}
    for name, of in SETS.items():
        if of != corpus:
            continue
        alone = {method: Recall() for method in cosines}
        fused = {method: Recall() for method in cosines}
        for question in read_set(name):
            golds = gold_rows(pages, question)
            vector = index.query_vector(question.text)
            bm25 = bm25_scores(index.keyword, question.text)
            for method, cosine_of in cosines.items():
                cosine = cosine_of(vector)
                alone[method].add(best(cosine), golds)
                fused[method].add(best(hybrid(cosine, bm25)), golds)
        sets[name] = {
            method: {"vectors": alone[method].figures(), "hybrid": fused[method].figures()}
            for method in cosines
        }
    return {
        "pages": len(pages),
        "windows": len(windowed),
        "windows_per_page": round(len(windowed) / len(pages), 2),
        "window_embed_seconds": round(seconds, 1) if seconds is not None else None,
        "sets": sets,
    }


def main(argv: list[str] | None = None) -> None:
    corpora = argv if argv else ["pydocs"]
    previous = read_results("page_vectors") or {}
    results = {
        "date": time.strftime("%Y-%m-%d"),
        "command": "python -m bench.page_vectors " + " ".join(corpora),
        "machine": machine(),
        "corpora": {
            **previous.get("corpora", {}),
            **{corpus: measure_corpus(corpus) for corpus in corpora},
        },
    }
    write_results("page_vectors", results)
    write_section(TITLE, readme_section(results))
    print(json.dumps(results, indent=2))


def readme_section(results: dict[str, Any]) -> str:
    machine_line = ", ".join(f"{key} {value}" for key, value in results["machine"].items())
    parts = [
        f"`{results['command']}` ({results['date']}; {machine_line}). A page's vector is of its "
        f"place and its first {WINDOW} word pieces, all-MiniLM-L6-v2's limit; most pages are "
        "longer. The same questions as above, with every page embedded whole, in windows of "
        f"{WINDOW} word pieces ({OVERLAP} shared with the window before, each after the page's "
        "place), and with a vector of the page's place alone blended in. Raw figures: "
        "`bench/results/page_vectors.json`."
    ]
    for corpus, measured in results["corpora"].items():
        if "skipped" in measured:
            parts.append(f"**{corpus}**: skipped ({measured['skipped']}).")
            continue
        cost = measured["window_embed_seconds"]
        parts.append(
            f"**{corpus}**: {measured['pages']:,} pages, {measured['windows']:,} windows "
            f"({measured['windows_per_page']} a page: that many times the embedding work"
            + (f"; {cost:.0f} s here" if cost else "")
            + ")."
        )
        for name, methods in measured["sets"].items():
            rows = [
                [
                    method,
                    f"{figures['vectors']['at1']:.3f}",
                    f"{figures['vectors']['at5']:.3f}",
                    f"{figures['hybrid']['at1']:.3f}",
                    f"{figures['hybrid']['at5']:.3f}",
                ]
                for method, figures in methods.items()
            ]
            header = ["page vector", "alone @1", "alone @5", "hybrid @1", "hybrid @5"]
            parts.append(f"*{name}*\n\n{table(header, rows)}")
    parts.append(
        "**Why runner keeps the first window.** Embedding pages whole costs "
        "the windows-per-page figure above in embedding time (and, one vector a window, as "
        "much in search time and disk), for a few questions more in the top 5 at most: "
        "within what one writer's wording decides. The page's opening, which follows its "
        "heading, is what the vector needs most. A place vector does not help questions "
        "that avoid the heading's words, which these are."
    )
    return "\n\n".join(parts) + "\n"


if __name__ == "__main__":
    main(sys.argv[1:])
