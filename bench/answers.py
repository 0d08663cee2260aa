"""The answers themselves, on the sets in users' words: is the gold section among the answer's
sources, and does the answer hold what a right answer must (its answer check)?

    python -m bench.answers [SET ...]   # writes bench/results/answers.json and its README section

Each set of `bench/questions/` worded as users ask (`*-users.csv`, each row with an `answer`
check) is asked through `runner eval`'s own code of a pipeline over its whole corpus, in the
three shapes a help desk is set up in:

- words: BM25 alone (`mode: keyword`), no deep fallback: runner without the `embed` extra;
- meaning: hybrid search (BM25 and all-MiniLM-L6-v2, reranked), no deep fallback;
- meaning + deep: hybrid search and the deep fallback with the offline gatekeeper.

The offline provider answers (no model), as a new user's first run does. A corpus that cannot
be fetched is skipped and says so. The first figures ever measured are kept as `before` beside
the newest run (`--before` re-takes them), so that the table shows what a change of the answerer
bought: the figures before issue 29's answerer were taken at the commit recorded with them.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from bench.deep_pipeline import deep_fallback_pipeline
from bench.readme import read_results, table, write_results, write_section
from bench.retrieval import PYDOCS, machine

BENCH = Path(__file__).resolve().parent
QUESTIONS = BENCH / "questions"
MODEL = "all-MiniLM-L6-v2"
TITLE = "Answers in users' words: sources and answer checks"
# set -> (its corpus, the files the corpus reads)
SETS = {
    "pydocs-users": ("pydocs", "**/*.rst.txt"),
    "pgdocs-users": ("pgdocs", "**/*.html"),
    "perlfaq-users": ("perldocs", "**/*.html"),
    "gitdocs-users": ("gitdocs", "**/*.html"),
}
# shape -> (the retrieve tool's search, whether the deep fallback is on)
SHAPES = {
    "words": ("keyword", False),
    "meaning": ("hybrid", False),
    "meaning + deep": ("hybrid", True),
}
FIGURES = ("questions", "sourced", "checks", "errors", "degraded", "latency_p50_ms")
# a corpus fetched by a script of the bench (or of shared/): its script, its download folder
DOWNLOADS = {
    "pgdocs": (BENCH.parent.parent / "shared" / "data" / "fetch-pgdocs.sh", "runner-bench-pgdocs"),
    "perldocs": (BENCH / "fetch-perldocs.sh", "runner-bench-perldocs"),
    "gitdocs": (BENCH / "fetch-gitdocs.sh", "runner-bench-gitdocs"),
}


def corpus_folder(corpus: str) -> Path | None:
    """The corpus's documents: pydocs from shared/, the others fetched (once) by their script."""
    if corpus == "pydocs":
        return PYDOCS if PYDOCS.is_dir() else None
    script, download = DOWNLOADS[corpus]
    folder = Path(tempfile.gettempdir()) / download
    done = subprocess.run(
        ["bash", str(script), str(folder)], capture_output=True, text=True, check=False
    )
    html = folder / "html"
    return html if done.returncode == 0 and html.is_dir() else None


def shaped_pipeline(
    folder: Path, corpus: Path, include: str, shape: str, *, embedding: str | None = MODEL
) -> Path:
    """A pipeline over the corpus (linked into its folder) in one of `SHAPES`, its index in a
    state folder shared by the shapes (one index a corpus: the shapes differ in the search and
    the fallback, not in what is indexed)."""
    mode, deep = SHAPES[shape]
    folder.mkdir(parents=True, exist_ok=True)
    link = folder / "docs"
    if not link.exists():
        link.symlink_to(corpus)
    text = deep_fallback_pipeline(
        domain="desk",
        corpus="docs",
        include=include,
        mode=mode,
        embedding=embedding,
        state_dir="state",
    )
    pipeline = yaml.safe_load(text)
    if not deep:  # no fallback, and none of the tools only the fallback uses
        pipeline.pop("deep_fallback")
        pipeline["tools"] = [tool for tool in pipeline["tools"] if tool["name"] == "docs_rag"]
    path = folder / f"{shape.replace(' + ', '-')}.yaml"
    path.write_text(yaml.safe_dump(pipeline, sort_keys=False), encoding="utf-8")
    return path


def evaluate(pipeline: Path, questions: Path, out: Path) -> dict[str, Any]:
    from runner.eval.evaluate import EvalOptions
    from runner.eval.evaluate import evaluate as run
    from runner.eval.setup import EvalSpec

    outcome = run(EvalSpec(pipeline), questions, EvalOptions(out=out, progress=False, jobs=2))
    metrics = outcome.summary["metrics"]
    return {key: metrics.get(key) for key in FIGURES}


def measure_set(
    name: str,
    base: Path,
    *,
    folder_of: Callable[[str], Path | None] = corpus_folder,
    questions: Path = QUESTIONS,
    shapes: tuple[str, ...] = tuple(SHAPES),
    embedding: str | None = MODEL,
) -> dict[str, Any]:
    """One set in each shape (`questions`: the folder of its CSV; `folder_of`: where a corpus's
    documents are, None when absent)."""
    corpus, include = SETS[name]
    documents = folder_of(corpus)
    if documents is None:
        return {"skipped": f"the {corpus} corpus could not be fetched"}
    found: dict[str, Any] = {}
    for shape in shapes:
        started = time.perf_counter()
        pipeline = shaped_pipeline(base / corpus, documents, include, shape, embedding=embedding)
        found[shape] = evaluate(pipeline, questions / f"{name}.csv", base / "runs" / name / shape)
        found[shape]["seconds"] = round(time.perf_counter() - started, 1)
        print(name, shape, found[shape], flush=True)
    return found


def commit() -> str:
    done = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    )
    return done.stdout.strip() or "unknown"


def run(names: list[str], base: Path, *, before: bool) -> dict[str, Any]:
    """Measure the sets named (all by default); the others keep their last figures. The
    `before` figures are kept from the first run unless `before` asks to take them anew."""
    previous = read_results("answers") or {}
    sets = dict(previous.get("sets", {}))
    for name in names:
        sets[name] = measure_set(name, base)
    kept = previous.get("before")
    return {
        "date": time.strftime("%Y-%m-%d"),
        "commit": commit(),
        "command": "python -m bench.answers",
        "machine": machine(),
        "model": MODEL,
        "sets": sets,
        "before": {"commit": commit(), "sets": sets} if before or not kept else kept,
    }


def readme_section(results: dict[str, Any]) -> str:
    before = results["before"]
    rows = []
    for name, shapes in results["sets"].items():
        if "skipped" in shapes:
            rows.append([name, "—", shapes["skipped"], "", "", ""])
            continue
        was = before["sets"].get(name, {})
        for shape, figures in shapes.items():
            old = was.get(shape, {})
            rows.append(
                [
                    name,
                    shape,
                    f"{_share(old.get('sourced'))} → {_share(figures['sourced'])}",
                    f"{_share(old.get('checks'))} → {_share(figures['checks'])}",
                    f"{old.get('errors', '—')} → {figures['errors']}",
                    str(figures["latency_p50_ms"]),
                ]
            )
    header = ["set", "shape", "gold among sources", "answer checks", "errors", "p50 ms"]
    return f"""`{results["command"]}` ({results["date"]}, commit {results["commit"]}; the `before`
figures at commit {before["commit"]}; {_host(results["machine"])}). Each set of `bench/questions/`
worded as users ask, through `runner eval` on the offline provider (no model) over its whole
corpus: **words** (BM25, no deep fallback), **meaning** (hybrid search with {results["model"]},
reranked), **meaning + deep** (the same and the deep fallback). *Gold among sources*: the share
of questions whose answer cites a gold section; *answer checks*: the share whose answer holds
the row's answer check (a phrase a right answer must hold, found in a gold section); *errors*:
rounds that ended in an error. Each cell reads before → now.

{table(header, rows)}
"""


def _host(machine: dict[str, Any]) -> str:
    return f"{machine['cpus']} CPUs, load average {machine['load_average_1min']}"


def _share(value: Any) -> str:
    return "—" if value is None else f"{value:.3f}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.answers", description=__doc__)
    parser.add_argument("sets", nargs="*", help=f"the sets (default: all of {', '.join(SETS)})")
    parser.add_argument("--before", action="store_true", help="take the `before` figures anew")
    parser.add_argument("--base", type=Path, help="where indexes and runs go (default: a temp dir)")
    args = parser.parse_args(argv or [])
    unknown = [name for name in args.sets if name not in SETS]
    if unknown:
        parser.error(f"unknown set {', '.join(unknown)}; choose from {', '.join(SETS)}")
    base = args.base or Path(tempfile.gettempdir()) / "runner-bench-answers"
    results = run(args.sets or list(SETS), base, before=args.before)
    write_results("answers", results)
    write_section(TITLE, readme_section(results))
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main(sys.argv[1:])
