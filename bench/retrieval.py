"""Retrieval benchmark on the Python docs (`../shared/data/pydocs`, ~1.4M words, read in place).

    python -m bench.retrieval            # writes bench/results/retrieval.json and bench/README.md
    python -m bench.retrieval --docs DIR # another copy of the Python docs (a tiny one in tests)

Figures (to track, not tests): index build (pages/s, peak memory), index load, BM25 query
latency p50/p95, and retrieval quality — recall@1 and recall@5 on the FAQ questions
(`faq/*.rst.txt`: each question heading is the query, its section the gold passage), for BM25
(embeddings and hybrid search: bench/users.py).

Each phase runs in its own process so that its peak memory is its own. The index is written to a
temporary state folder, never beside the corpus; the docs are linked into it (`follow_symlinks`),
as an author keeping a document set elsewhere would.
"""

from __future__ import annotations

import json
import os
import platform
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

from bench.readme import write_results, write_section

ROOT = Path(__file__).resolve().parent.parent
# the Python docs beside the repository (RUNNER_BENCH_PYDOCS names them elsewhere)
PYDOCS = Path(
    os.environ.get("RUNNER_BENCH_PYDOCS") or ROOT.parent / "shared" / "data" / "pydocs" / "docs"
)
DOCS_LINK = "pydocs"  # the docs, linked into the state folder
TITLE = "Retrieval"
MAX_WORDS = 250
LATENCY_REPEATS = 3
TARGETS = {"build_seconds": 10.0, "bm25_p50_ms": 5.0}


@dataclass(frozen=True)
class Question:
    document: str  # e.g. "faq/general.rst.txt"
    text: str  # the question heading: the query


def faq_questions(docs: Path) -> list[Question]:
    """Every FAQ heading that is a question (it ends with "?")."""
    from runner.retrieval.pages import headings, read_document

    questions = []
    for path in sorted((docs / "faq").glob("*.rst.txt")):
        document = read_document(docs, path)
        for heading in headings(document):
            if heading.endswith("?"):
                questions.append(Question(document.path, heading))
    return questions


def is_gold(page: Any, question: Question) -> bool:
    """A page of the question's section: it is headed by the question, or holds its heading
    (a very short section shares a page with the next one)."""
    if page.document != question.document:
        return False
    return (
        page.heading == question.text
        or re.search(rf"^{re.escape(question.text)}$", page.text, re.MULTILINE) is not None
    )


def pipeline(state: Path) -> Any:
    from runner.config.model import Corpus, Pipeline

    # a folder of the pipeline's that links the docs in: corpus paths stay in the pipeline's
    # folder, unless the corpus follows links out (naming PYDOCS itself was refused: R124)
    corpus = Corpus("pydocs", state / DOCS_LINK, max_words=MAX_WORDS, follow_symlinks=True)
    return Pipeline(
        path=state / "bench.yaml",
        domain="bench",
        tools=(),
        corpora={"pydocs": corpus},
        state_dir=state,
    )


def cpu_seconds() -> float:
    """This process's CPU time: unlike wall time, it hardly moves when others share the CPUs."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def peak_rss_mb() -> float:
    # ru_maxrss is in KiB on Linux, bytes on macOS
    scale = 1 if sys.platform == "darwin" else 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale / 2**20


# --- phases (each in a fresh process) ----------------------------------------------------------


def phase_build(state: Path) -> dict[str, Any]:
    from runner.retrieval import open_corpus

    baseline = peak_rss_mb()
    started, cpu = time.perf_counter(), cpu_seconds()
    index = open_corpus(pipeline(state), "pydocs", force=True)
    seconds, cpu = time.perf_counter() - started, cpu_seconds() - cpu
    words = sum(len(page.text.split()) for page in index.pages())
    return {
        "documents": len({page.document for page in index.pages()}),
        "pages": len(index),
        "words": words,
        "seconds": round(seconds, 2),
        "cpu_seconds": round(cpu, 2),
        "pages_per_second": round(len(index) / seconds),
        "peak_rss_mb": round(peak_rss_mb(), 1),
        "rss_before_build_mb": round(baseline, 1),
        "index_size_mb": round(folder_size(index.folder) / 2**20, 1),
    }


def phase_query(state: Path) -> dict[str, Any]:
    from runner.retrieval import open_corpus

    started, cpu = time.perf_counter(), cpu_seconds()
    index = open_corpus(pipeline(state), "pydocs", build=False)
    load_seconds, load_cpu = time.perf_counter() - started, cpu_seconds() - cpu
    questions = faq_questions(state / DOCS_LINK)
    result: dict[str, Any] = {
        "load_seconds": round(load_seconds, 2),
        "load_cpu_seconds": round(load_cpu, 2),
        "load_peak_rss_mb": round(peak_rss_mb(), 1),
        "questions": len(questions),
        "bm25": quality(index, questions, "keyword") | latency(index, questions),
    }
    return result


def latency(index: Any, questions: list[Question]) -> dict[str, float]:
    index.search(questions[0].text, 5)  # warm-up
    times = []
    for _ in range(LATENCY_REPEATS):
        for question in questions:
            started = time.perf_counter()
            index.search(question.text, 5)
            times.append((time.perf_counter() - started) * 1000)
    cuts = statistics.quantiles(times, n=100)
    return {"p50_ms": round(cuts[49], 2), "p95_ms": round(cuts[94], 2)}


def quality(index: Any, questions: list[Question], mode: str) -> dict[str, float]:
    at1 = at5 = 0
    for question in questions:
        hits = index.search(question.text, 5, mode=mode)
        golds = [is_gold(hit.page, question) for hit in hits]
        at1 += bool(golds[:1] and golds[0])
        at5 += any(golds)
    count = len(questions)
    return {"recall_at_1": round(at1 / count, 3), "recall_at_5": round(at5 / count, 3)}


def folder_size(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


# --- the driver ------------------------------------------------------------------------------


def run_phase(name: str, state: Path) -> dict[str, Any]:
    command = [sys.executable, "-m", "bench.retrieval", "--phase", name, str(state)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"bench phase {name} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m bench.retrieval")
    parser.add_argument("--docs", type=Path, default=PYDOCS, help="the Python docs' folder")
    args = parser.parse_args(argv or [])
    if not args.docs.is_dir():
        print(f"skipped: the pydocs corpus is not at {args.docs}")
        return
    host = machine()  # before the phases, so the load average is other work's, not ours
    with tempfile.TemporaryDirectory(prefix="runner-bench-") as folder:
        state = Path(folder)
        (state / DOCS_LINK).symlink_to(args.docs.resolve())
        build = run_phase("build", state)
        query = run_phase("query", state)
    shown = "../shared/data/pydocs/docs" if args.docs == PYDOCS else str(args.docs)
    results = {
        "date": date.today().isoformat(),
        "command": "python -m bench.retrieval" + "".join(f" {arg}" for arg in (argv or [])),
        "machine": host,
        "corpus": {"path": shown, "max_words": MAX_WORDS},
        "build": build,
        "load": {
            "seconds": query["load_seconds"],
            "cpu_seconds": query["load_cpu_seconds"],
            "peak_rss_mb": query["load_peak_rss_mb"],
        },
        "questions": query["questions"],
        "bm25": query["bm25"],
        "targets": TARGETS,
    }
    write_results("retrieval", results)
    write_section(TITLE, readme_section(results))
    print(json.dumps(results, indent=2))


def machine() -> dict[str, Any]:
    # the load average says whether other work shared the machine (the figures move with it)
    return {
        "python": platform.python_version(),
        "platform": platform.platform(terse=True),
        "cpus": os.cpu_count(),
        "load_average_1min": round(os.getloadavg()[0], 2),
    }


def readme_section(results: dict[str, Any]) -> str:
    build, bm25 = results["build"], results["bm25"]
    hybrid_row = (
        "| embeddings and hybrid search | see "
        "[Questions in users' words](#questions-in-users-words) | |"
    )
    machine_line = ", ".join(f"{key} {value}" for key, value in results["machine"].items())
    rows = [
        (
            "index build",
            f"{build['seconds']} s ({build['cpu_seconds']} s CPU), {build['pages']:,} pages "
            f"({build['pages_per_second']:,} pages/s)",
            f"< {TARGETS['build_seconds']:.0f} s",
        ),
        (
            "build peak memory (RSS)",
            f"{build['peak_rss_mb']} MB ({build['rss_before_build_mb']} MB before the build)",
            "",
        ),
        ("index on disk", f"{build['index_size_mb']} MB", ""),
        (
            "index load",
            f"{results['load']['seconds']} s ({results['load']['cpu_seconds']} s CPU)",
            "",
        ),
        (
            "BM25 query latency p50 / p95",
            f"{bm25['p50_ms']} ms / {bm25['p95_ms']} ms",
            f"p50 < {TARGETS['bm25_p50_ms']:.0f} ms",
        ),
        ("BM25 recall@1 / @5", f"{bm25['recall_at_1']:.3f} / {bm25['recall_at_5']:.3f}", ""),
    ]
    table = "\n".join(f"| {name} | {value} | {target} |" for name, value, target in rows)
    return f"""`{results["command"]}` ({results["date"]}; {machine_line}). The Python docs
(`{results["corpus"]["path"]}`, read in place): {build["documents"]} documents,
{build["words"]:,} words, pages of at most {results["corpus"]["max_words"]} words. Quality: the
{results["questions"]} FAQ questions (`faq/*.rst.txt`), each question heading as the query and its
section as the gold passage. Times are wall clock, with CPU time beside them: when the load
average is above the CPU count, other work shared the machine and wall times stretch. Raw
figures: `bench/results/retrieval.json`.

| figure | value | target |
|---|---|---|
{table}
{hybrid_row}
"""


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--phase":
        phases = {"build": phase_build, "query": phase_query}
        print(json.dumps(phases[sys.argv[2]](Path(sys.argv[3]))))
    else:
        main(sys.argv[1:])
