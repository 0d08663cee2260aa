"""How fast an already-built index opens, at 10,000 and 100,000 pages, and the PostgreSQL manual
indexed from HTML.

    python -m bench.index_open     # writes bench/results/index_open.json and its README section
    python -m bench.index_open --docs DIR --sizes 20,40 --no-pgdocs   # (the tests' tiny run)

- **open**: a fresh process times `open_corpus` on an up-to-date index (the staleness check
  included: the manifest, a stat of every corpus file), once with nothing imported yet (what
  `runner run` pays: importing bm25s and numpy included) and once more in the same process after
  the imports; then the first query, and query p50 / p95 over the corpus's own headings.
- **sizes**: the Python docs (`../shared/data/pydocs/docs`, about 8,400 pages) repeated under
  changed names (`copy01/library/os.rst.txt`, …: file symlinks in a temporary folder) until the
  corpus has 10,000 and 100,000 pages.
- **pgdocs**: the PostgreSQL 15 manual as 1,169 HTML files, fetched once with
  `../shared/data/fetch-pgdocs.sh` into a temporary folder outside the repository (skipped when
  that fails, e.g. without apt): pages, index time, open time, query p50 / p95, peak memory.

Each measurement runs in its own process so that its time and memory are its own.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path
from typing import Any

from bench.processes import checkout_env
from bench.readme import table, write_results, write_section
from bench.retrieval import PYDOCS, ROOT, machine

SIZES = (10_000, 100_000)
TARGETS_MS = {10_000: 150, 100_000: 300}
PGDOCS_SCRIPT = ROOT.parent / "shared" / "data" / "fetch-pgdocs.sh"
PGDOCS_BUILD_TARGET_S = 15
QUERIES = 200


def pipeline(folder: Path, include: str) -> Any:
    from runner.config.model import Corpus, Pipeline

    # the corpus folder links the Python docs (or the downloaded manual) in
    corpus = Corpus(
        "docs", folder / "corpus", include=(include,), max_words=250, follow_symlinks=True
    )
    return Pipeline(
        path=folder / "bench.yaml",
        domain="bench",
        tools=(),
        corpora={"docs": corpus},
        state_dir=folder / "state",
    )


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# --- phases (each in its own process) ----------------------------------------------------------


def phase_build(folder: Path, include: str) -> dict[str, Any]:
    from runner.retrieval import open_corpus

    started = time.perf_counter()
    index = open_corpus(pipeline(folder, include), "docs", force=True)
    return {
        "pages": len(index),
        "build_seconds": round(time.perf_counter() - started, 2),
        "build_peak_rss_mb": round(peak_rss_mb(), 1),
    }


def phase_open(folder: Path, include: str) -> dict[str, Any]:
    started = time.perf_counter()
    from runner.retrieval import open_corpus

    cold = open_corpus(pipeline(folder, include), "docs", build=False)
    cold_ms = (time.perf_counter() - started) * 1000
    started = time.perf_counter()
    index = open_corpus(pipeline(folder, include), "docs", build=False)
    warm_ms = (time.perf_counter() - started) * 1000
    assert not cold.status.rebuilt and not index.status.rebuilt
    rss_after_open = peak_rss_mb()  # before the full scan below reads every page
    queries = [page.heading for page in index.pages()[:: max(1, len(index) // QUERIES)]]
    queries = [query for query in queries if query][:QUERIES]
    started = time.perf_counter()
    index.search(queries[0], 5)
    first_ms = (time.perf_counter() - started) * 1000
    times = []
    for query in queries:
        started = time.perf_counter()
        index.search(query, 5)
        times.append((time.perf_counter() - started) * 1000)
    cuts = statistics.quantiles(times, n=100)
    return {
        "open_cold_ms": round(cold_ms, 1),
        "open_ms": round(warm_ms, 1),
        "first_query_ms": round(first_ms, 2),
        "query_p50_ms": round(cuts[49], 2),
        "query_p95_ms": round(cuts[94], 2),
        "open_peak_rss_mb": round(rss_after_open, 1),
        "queries": len(queries),
    }


def run_phase(
    name: str, folder: Path, include: str, checkout: Path | None = None
) -> dict[str, Any]:
    """One phase in a fresh process, of this checkout's runner or of `checkout`'s (its own
    bench/index_open.py's phase, on its own runner)."""
    where = checkout or ROOT
    command = [sys.executable, "-m", "bench.index_open", "--phase", name, str(folder), include]
    env = checkout_env(where)
    done = subprocess.run(command, cwd=where, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"bench phase {name} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


# --- corpora -----------------------------------------------------------------------------------


def repeated_pydocs(folder: Path, docs: Path, pages: int, per_document: dict[str, int]) -> None:
    """pydocs under changed names (copyNN/…) until the corpus has at least `pages` pages."""
    corpus = folder / "corpus"
    total, copy = 0, 0
    while total < pages:
        copy += 1
        for document, count in per_document.items():
            target = corpus / f"copy{copy:02d}" / document
            target.parent.mkdir(parents=True, exist_ok=True)
            target.symlink_to(docs / document)
            total += count
            if total >= pages:
                return


def pydocs_pages_per_document(folder: Path, docs: Path) -> dict[str, int]:
    (folder / "corpus").symlink_to(docs)
    run_phase("build", folder, "**/*.rst.txt")
    from runner.retrieval import open_corpus

    index = open_corpus(pipeline(folder, "**/*.rst.txt"), "docs", build=False)
    counts: dict[str, int] = {}
    for page in index.pages():
        counts[page.document] = counts.get(page.document, 0) + 1
    return counts


def opened(folder: Path, opens: int, baseline: Path | None) -> dict[str, Any]:
    """The open phase `opens` times, each in a fresh process: the figures' medians. With a
    baseline, its runner opens its own index of the same corpus (a copy of the folder's links)
    between two of ours (A B A B), and its medians go under "baseline"."""
    include = "**/*.rst.txt"
    runs: dict[str, list[dict[str, Any]]] = {"runner": []}
    theirs = folder.parent / f"{folder.name}-baseline"
    if baseline is not None:
        shutil.copytree(folder / "corpus", theirs / "corpus", symlinks=True)
        aged(theirs)
        run_phase("build", theirs, include, baseline)
        runs["baseline"] = []
    for _ in range(max(1, opens)):
        runs["runner"].append(run_phase("open", folder, include))
        if baseline is not None:
            runs["baseline"].append(run_phase("open", theirs, include, baseline))
    figures = _medians(runs["runner"])
    if baseline is not None:
        figures["baseline"] = _medians(runs["baseline"])
    return figures


def _medians(runs: list[dict[str, Any]]) -> dict[str, Any]:
    return {key: statistics.median(run[key] for run in runs) for key in runs[0]}


def aged(folder: Path) -> None:
    """The folders made for a corpus dated an hour back: runner trusts no folder changed in the
    last two seconds to be unchanged (it lists it again at every open), and an author's corpus
    is rarely that fresh."""
    old = time.time() - 3600
    for here, names, _ in os.walk(folder):
        for name in names:
            os.utime(os.path.join(here, name), (old, old), follow_symlinks=False)
    os.utime(folder, (old, old))


def pgdocs(folder: Path) -> dict[str, Any]:
    download = Path(tempfile.gettempdir()) / "runner-bench-pgdocs"
    done = subprocess.run(
        ["bash", str(PGDOCS_SCRIPT), str(download)], capture_output=True, text=True, check=False
    )
    html = download / "html"
    if done.returncode != 0 or not html.is_dir():
        return {"skipped": (done.stderr or done.stdout).strip() or "fetch-pgdocs.sh failed"}
    (folder / "corpus").symlink_to(html)
    files = sum(1 for _ in html.glob("*.html"))
    return (
        {"files": files}
        | run_phase("build", folder, "**/*.html")
        | run_phase("open", folder, "**/*.html")
    )


def main(argv: list[str] | None = None) -> None:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m bench.index_open")
    parser.add_argument("--docs", type=Path, default=PYDOCS, help="the Python docs' folder")
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)), help="pages, comma-separated")
    parser.add_argument("--no-pgdocs", action="store_true", help="leave the PostgreSQL manual out")
    parser.add_argument("--opens", type=int, default=5, help="fresh processes opening each index")
    parser.add_argument("--baseline", type=Path, help="an older checkout of runner to pair with")
    args = parser.parse_args(argv or [])
    if not args.docs.is_dir():
        print(f"skipped: the pydocs corpus is not at {args.docs}")
        return
    host = machine()
    sizes: dict[str, Any] = {}
    wanted = [int(size) for size in args.sizes.split(",")]
    with tempfile.TemporaryDirectory(prefix="runner-open-") as base:
        base_folder = Path(base) / "pydocs"
        base_folder.mkdir()
        per_document = pydocs_pages_per_document(base_folder, args.docs.resolve())
        for size in wanted:
            folder = Path(base) / str(size)
            folder.mkdir()
            repeated_pydocs(folder, args.docs.resolve(), size, per_document)
            aged(folder)
            build = run_phase("build", folder, "**/*.rst.txt")
            sizes[str(size)] = build | opened(folder, args.opens, args.baseline)
            print(size, sizes[str(size)], flush=True)
        pg: dict[str, Any] = {"skipped": "--no-pgdocs"}
        if not args.no_pgdocs:
            pg_folder = Path(base) / "pgdocs"
            pg_folder.mkdir()
            pg = pgdocs(pg_folder)
    results = {
        "date": date.today().isoformat(),
        "command": "python -m bench.index_open" + "".join(f" {arg}" for arg in (argv or [])),
        "machine": host,
        "sizes": sizes,
        "pgdocs": pg,
        "baseline": args.baseline.name if args.baseline else None,
        "opens": args.opens,
        "targets_ms": {
            str(size): TARGETS_MS.get(size, max(TARGETS_MS.values())) for size in wanted
        },
        "pgdocs_build_target_s": PGDOCS_BUILD_TARGET_S,
    }
    write_results("index_open", results)
    write_section("Index open and the PostgreSQL manual", readme_section(results))
    print(json.dumps(results, indent=2))


def readme_section(results: dict[str, Any]) -> str:
    machine_line = ", ".join(f"{key} {value}" for key, value in results["machine"].items())
    rows = []
    for size, figures in results["sizes"].items():
        target = results["targets_ms"][size]
        before = figures.get("baseline")
        rows.append(
            [
                f"pydocs repeated, {figures['pages']:,} pages",
                f"{figures['open_cold_ms']:.1f} ms ({figures['open_ms']:.1f} ms imports done)",
                f"≤ {target} ms",
                f"{figures['build_seconds']} s",
                f"{figures['query_p50_ms']} / {figures['query_p95_ms']} ms",
                f"{figures['open_peak_rss_mb']} MB",
                f"{before['open_cold_ms']:.1f} ms, {before['query_p50_ms']} / "
                f"{before['query_p95_ms']} ms, {before['open_peak_rss_mb']} MB "
                f"({figures['open_cold_ms'] / before['open_cold_ms']:.2f}×)"
                if before
                else "",
            ]
        )
    pg = results["pgdocs"]
    if "skipped" in pg:
        pg_line = f"PostgreSQL manual: skipped ({pg['skipped']})."
    else:
        rows.append(
            [
                f"PostgreSQL manual (HTML, {pg['files']:,} files), {pg['pages']:,} pages",
                f"{pg['open_cold_ms']} ms ({pg['open_ms']} ms imports done)",
                "",
                f"{pg['build_seconds']} s (target < {results['pgdocs_build_target_s']} s)",
                f"{pg['query_p50_ms']} / {pg['query_p95_ms']} ms",
                f"{pg['open_peak_rss_mb']} MB (build {pg['build_peak_rss_mb']} MB)",
                "",
            ]
        )
        pg_line = ""
    header = ["corpus", "open", "target", "index build", "query p50 / p95", "memory after open"]
    header.append(
        f"before ({results['baseline']}): open, query, memory" if results.get("baseline") else ""
    )
    return f"""`{results["command"]}` ({results["date"]}; {machine_line}). An index that is
already built, opened by a fresh process with `open_corpus` (the staleness check included), the
median of {results.get("opens", 1)} processes: the first figure from a process that has imported
nothing yet (runner's modules included, as `runner run` pays), the one in brackets a second open
in the same process. With a baseline, an older checkout opens its own index of the same corpus
in a fresh process between two of ours (A B A B). Queries: up to
{QUERIES} of the corpus's own headings, top 5. The 10,000- and 100,000-page corpora are the
Python docs repeated under changed names (their folders dated an hour back: runner lists a folder
changed in the last two seconds again at every open); the PostgreSQL manual is indexed from its
HTML as a user would (`include: ["**/*.html"]`). Raw figures: `bench/results/index_open.json`.
{pg_line}

{table(header, rows)}

**What an open costs.** Importing what it needs (runner's config model and retrieval modules,
PyStemmer; neither bm25s nor numpy since the keyword search sums the stored BM25 matrix itself),
reading the manifest and the vocabulary (about 30,000 stems of the Python docs, whatever the
number of copies), a stat of every corpus folder and file the manifest lists (no listing of the
folder while they all hold) and memory-mapping the three arrays. What grows with the corpus is
the stat of its files (6,000 at 100,000 pages) and the manifest that lists them.
"""


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--phase":
        phases = {"build": phase_build, "open": phase_open}
        print(json.dumps(phases[sys.argv[2]](Path(sys.argv[3]), sys.argv[4])))
    else:
        main(sys.argv[1:])
