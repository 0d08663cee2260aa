"""The Python FAQ as questions over all of the Python docs (`../shared/data/pydocs/docs`).

    python -m bench.faq          # writes bench/results/faq.json and its bench/README.md section

Each FAQ question (a heading of `faq/*.rst.txt` ending in "?") is asked of a pipeline over all of
pydocs (a `retrieve` tool, top 5; the offline provider; the deep fallback with the offline
gatekeeper), through the real runtime, as `runner run` would. Its gold section is the FAQ section
under that heading. Scored, per question:

- gold @1 / @5: a gold page is first / among the five pages the retrieval returned (its trace
  event); the same for two baselines run here, on the same questions: a one-document-per-section
  bm25s index (every heading's section one document), and llama-index's own `BM25Retriever` over
  the files with its default chunking (`SentenceSplitter`: 1024 tokens, overlap 200; a chunk is
  gold when it is of the gold file and holds the question line);
- gold among the offline answer's sources;
- content-word recall: the share of the gold section's content words (stems) the offline answer
  holds, beside a naive answer (the first 80 words of the top page);
- the gatekeeper: how often it sends the question to the deep fallback when a gold page is among
  the retrieved pages, and when none is.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from bench.deep_pipeline import deep_fallback_pipeline
from bench.readme import table, write_results, write_section
from bench.retrieval import PYDOCS, Question, faq_questions, is_gold, machine

TOP_K = 5
NAIVE_WORDS = 80


@dataclass
class Scores:
    at1: int = 0
    at5: int = 0
    sourced: int = 0
    recall: float = 0.0
    naive_recall: float = 0.0
    deep_with_gold: int = 0
    with_gold: int = 0
    deep_without_gold: int = 0
    without_gold: int = 0


def gold_words(pages: list[Any], question: Question) -> set[str]:
    from runner.text.words import stems

    text = "\n".join(page.text for page in pages if is_gold(page, question))
    return stems(text.replace(question.text, " "))


def recall(wanted: set[str], text: str) -> float:
    from runner.text.words import token_stems

    return len(wanted & token_stems(text)) / len(wanted) if wanted else 0.0


def faq_pipeline() -> str:
    """The pipeline over the Python docs, linked in as `pydocs/` beside it."""
    return deep_fallback_pipeline(
        domain="pydocs", corpus="pydocs", path="pydocs", include="**/*.rst.txt", top_k=TOP_K
    )


async def runner_scores(state: Path, questions: list[Question]) -> tuple[Scores, dict[str, Any]]:
    from runner.app import Runtime
    from runner.retrieval import open_corpus
    from runner.sessions import SessionStore

    path = state / "faq.yaml"
    (state / "pydocs").symlink_to(PYDOCS)  # corpus paths stay inside the pipeline's folder
    path.write_text(faq_pipeline(), encoding="utf-8")
    runtime = Runtime.open(path, build_indexes=True)
    index = open_corpus(runtime.pipeline, "pydocs")
    pages = index.pages()
    scores, times = Scores(), []
    with SessionStore(state / "sessions.sqlite") as store:
        for question in questions:
            started = time.perf_counter()
            result = await runtime.conversation(store).say(question.text)
            times.append(time.perf_counter() - started)
            events = result.trace.events if result.trace is not None else []
            rag = next(e for e in events if e["event"] == "retrieval" and e["tool"] == "docs_rag")
            hits = [index.page(f"{row['document']}#{row['page']}") for row in rag["pages"]]
            golds = [hit is not None and is_gold(hit, question) for hit in hits]
            scores.at1 += bool(golds and golds[0])
            scores.at5 += any(golds)
            sources = [index.page(f"{s.document}#{s.page}") for s in result.sources]
            scores.sourced += any(s is not None and is_gold(s, question) for s in sources)
            wanted = gold_words(pages, question)
            scores.recall += recall(wanted, result.answer or "")
            naive = " ".join(hits[0].text.split()[:NAIVE_WORDS]) if hits and hits[0] else ""
            scores.naive_recall += recall(wanted, naive)
            gate = next((e for e in events if e["event"] == "gatekeeper"), None)
            deep = gate is not None and not gate.get("enough", True)
            if any(golds):
                scores.with_gold += 1
                scores.deep_with_gold += deep
            else:
                scores.without_gold += 1
                scores.deep_without_gold += deep
    runtime.close()
    rounds = {"round_p50_ms": round(statistics.median(times) * 1000, 1)}
    return scores, rounds | {"pages": len(pages)}


def section_baseline(questions: list[Question]) -> dict[str, float]:
    """bm25s over one document per heading section (the whole section, any length)."""
    import bm25s
    import Stemmer

    from runner.retrieval.pages import corpus_files, read_document

    keys, texts = [], []
    for path in corpus_files(PYDOCS, ("**/*.rst.txt",)):
        document = read_document(PYDOCS, path)
        heading = ""
        body: list[str] = []
        for block in [*document.blocks(), None]:
            if block is None or block.heading is not None:
                if body:
                    keys.append((document.path, heading))
                    texts.append("\n".join(body))
                heading, body = (block.heading or "", []) if block is not None else ("", [])
            body.append(block.text if block is not None else "")
    stemmer = Stemmer.Stemmer("english")
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False))
    at1 = at5 = 0
    for question in questions:
        tokens = bm25s.tokenize(
            [question.text], stopwords="en", stemmer=stemmer, show_progress=False
        )
        found, _ = retriever.retrieve(tokens, k=TOP_K, show_progress=False)
        golds = [keys[i] == (question.document, question.text) for i in found[0]]
        at1 += golds[0]
        at5 += any(golds)
    return {"at1": at1 / len(questions), "at5": at5 / len(questions), "documents": len(texts)}


def llama_index_baseline(questions: list[Question]) -> dict[str, float]:
    """llama-index's BM25Retriever over the files, chunked by its default SentenceSplitter."""
    from llama_index.core import Document
    from llama_index.core.node_parser import SentenceSplitter
    from llama_index.retrievers.bm25 import BM25Retriever

    from runner.retrieval.pages import corpus_files

    documents = [
        Document(
            text=path.read_text(encoding="utf-8"),
            metadata={"file": path.relative_to(PYDOCS).as_posix()},
        )
        for path in corpus_files(PYDOCS, ("**/*.rst.txt",))
    ]
    nodes = SentenceSplitter().get_nodes_from_documents(documents)
    retriever = BM25Retriever.from_defaults(nodes=nodes, similarity_top_k=TOP_K)
    at1 = at5 = 0
    for question in questions:
        hits = retriever.retrieve(question.text)
        golds = [
            hit.node.metadata["file"] == question.document
            and question.text in hit.node.get_content()
            for hit in hits
        ]
        at1 += bool(golds and golds[0])
        at5 += any(golds)
    return {"at1": at1 / len(questions), "at5": at5 / len(questions), "chunks": len(nodes)}


def main() -> None:
    if not PYDOCS.is_dir():
        print(f"skipped: the pydocs corpus is not at {PYDOCS}")
        return
    host = machine()
    questions = faq_questions(PYDOCS)
    with tempfile.TemporaryDirectory(prefix="runner-faq-") as folder:
        scores, extra = asyncio.run(runner_scores(Path(folder), questions))
    count = len(questions)
    results = {
        "date": date.today().isoformat(),
        "command": "python -m bench.faq",
        "machine": host,
        "questions": count,
        "top_k": TOP_K,
        "runner": {
            "at1": scores.at1 / count,
            "at5": scores.at5 / count,
            "gold_among_sources": scores.sourced / count,
            "answer_recall": scores.recall / count,
            "naive_recall": scores.naive_recall / count,
            "deep_when_gold_in_top_k": scores.deep_with_gold / max(1, scores.with_gold),
            "deep_when_gold_missing": scores.deep_without_gold / max(1, scores.without_gold),
            "gold_in_top_k": scores.with_gold,
            "gold_missing": scores.without_gold,
            **extra,
        },
        "bm25s_per_section": section_baseline(questions),
        "llama_index_bm25": llama_index_baseline(questions),
    }
    write_results("faq", results)
    write_section("Python FAQ over all of pydocs", readme_section(results))
    print(results)


def readme_section(results: dict[str, Any]) -> str:
    ours, sections, llama = (
        results["runner"],
        results["bm25s_per_section"],
        results["llama_index_bm25"],
    )
    machine_line = ", ".join(f"{key} {value}" for key, value in results["machine"].items())
    rows = [
        [
            "gold section @1",
            f"{ours['at1']:.3f}",
            f"{sections['at1']:.3f}",
            f"{llama['at1']:.3f}",
            "≥ bm25s per section",
        ],
        [
            "gold section @5",
            f"{ours['at5']:.3f}",
            f"{sections['at5']:.3f}",
            f"{llama['at5']:.3f}",
            "≥ 0.95",
        ],
        [
            "gold among the offline answer's sources",
            f"{ours['gold_among_sources']:.3f}",
            "",
            "",
            "≥ 0.85",
        ],
        [
            "content-word recall of the answer",
            f"{ours['answer_recall']:.3f}",
            f"naive (first {NAIVE_WORDS} words of the top page): {ours['naive_recall']:.3f}",
            "",
            "above naive",
        ],
        [
            "deep fallback when gold is in the top k / missing",
            f"{ours['deep_when_gold_in_top_k']:.3f} ({ours['gold_in_top_k']} q.) / "
            f"{ours['deep_when_gold_missing']:.3f} ({ours['gold_missing']} q.)",
            "",
            "",
            "few / most",
        ],
    ]
    return f"""`python -m bench.faq` ({results["date"]}; {machine_line}). {results["questions"]}
questions: every heading of `faq/*.rst.txt` that ends in "?", asked of a pipeline over all of
the Python docs ({ours["pages"]:,} pages; a `retrieve` tool with top_k {results["top_k"]}, the
offline provider, the deep fallback with the offline gatekeeper) through the real runtime
(median round {ours["round_p50_ms"]} ms). The gold is the FAQ section under the question. Beside
it, in the same run: bm25s over one document per heading section ({sections["documents"]:,}
sections), and llama-index's `BM25Retriever` over the files with its default chunking
({llama["chunks"]:,} chunks of 1024 tokens; a chunk is gold when it holds the question line, so
its long chunks count a hit for any FAQ question they contain). Raw figures:
`bench/results/faq.json`.

{table(["figure", "runner", "bm25s per section", "llama-index BM25", "target"], rows)}
"""


if __name__ == "__main__":
    main() if len(sys.argv) == 1 else sys.exit(f"usage: python -m bench.faq ({sys.argv[1:]}?)")
