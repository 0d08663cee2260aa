"""Lookup tables: the key index on disk beside the index in memory, as whole `runner run`s.

    python -m bench.tables [--quick]

For a table of 100,000 and of 1,000,000 rows (two key columns), each case is a `runner run` of
one question naming two rows, in a fresh process, timed from outside and its peak resident
memory taken from the kernel (wait4):

- in memory: the store cannot be written (the pipeline's `state_dir:` is a file), so every run
  reads and indexes the table, as every run did before the store;
- store, first run: no store yet; the run builds it (and answers);
- store, later run: the run opens the store and answers.

Beside them, the same run on a 10-row table: Python's start, the imports, the pipeline and the
offline LLM, which no index can make faster. "Beyond the baseline" is a run's time less that.
Every run's answer must cite both rows, or the benchmark fails. `--quick` makes the tables 100
times smaller (for the harness test).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path
from typing import Any

from bench.readme import table, write_results, write_section

TITLE = "Lookup tables: the key index on disk"
SIZES = (100_000, 1_000_000)
REPEATS = 3
MEMORY_CAP = 3 * 1024**3
RUNNER = Path(sys.executable).with_name("runner")


def write_case(folder: Path, rows: int) -> dict[str, Path]:
    """The table and its pipelines: with a store (the default state folder) and without."""
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "releases.csv").open("w", encoding="utf-8") as handle:
        handle.write("codename,version,price\n")
        handle.writelines(f"code{i},Release {i},{i}\n" for i in range(rows))
    (folder / "blocked").write_text("a file where a state folder would be\n", encoding="utf-8")
    pipelines = {}
    for name, state in (("store", ""), ("memory", "state_dir: blocked\n")):
        path = folder / f"{name}.yaml"
        path.write_text(
            f"domain: distro\n{state}tools:\n  - name: releases\n    kind: lookup\n"
            "    description: Releases by codename or version.\n"
            "    activation:\n      pattern: '\\bcode\\d+|Release'\n"
            "    table: releases.csv\n    key: [codename, version]\n",
            encoding="utf-8",
        )
        pipelines[name] = path
    return pipelines


def question(rows: int) -> tuple[str, list[str]]:
    return f"What do code{rows // 2} and Release {rows - 1} cost?", [
        f"code{rows // 2}",
        f"code{rows - 1}",
    ]


def run_once(pipeline: Path, rows: int) -> dict[str, Any]:
    """One `runner run` in a fresh process, started from a fresh Python of its own, whose only
    child it is: so that the kernel's peak memory of its children is that run's alone."""
    command = [sys.executable, "-m", "bench.tables", "--child", str(pipeline), str(rows)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=900, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{pipeline}: {done.stderr[-3000:]}")
    return json.loads(done.stdout)


def child(pipeline: Path, rows: int) -> dict[str, Any]:
    asked, wanted = question(rows)
    sessions = pipeline.parent / "sessions.sqlite"  # not in the state folder: it may be blocked
    command = [str(RUNNER), "run", str(pipeline), asked, "--llm", "offline", "--json"]
    command += ["--state", str(sessions)]
    started = time.perf_counter()
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=900, check=False, preexec_fn=_cap_memory
    )
    seconds = time.perf_counter() - started
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    result = json.loads(done.stdout) if done.returncode == 0 else {}
    headings = sorted(source.get("heading") for source in result.get("sources", []))
    if done.returncode != 0 or headings != sorted(wanted):
        raise SystemExit(f"exit {done.returncode}, sources {headings}\n{done.stderr[-2000:]}")
    warned = "cannot be stored" in done.stderr
    return {"seconds": round(seconds, 3), "peak_mb": round(peak_mb, 1), "warned": warned}


def child_in_process(pipeline: Path, rows: int) -> dict[str, Any]:
    """What a run spends on the table once Python has imported runner: open the index (or build
    it in memory), find the question's keys, read their rows and the extraction prompt's
    listing."""
    from runner.config import load_pipeline
    from runner.llm.known_values import known_values
    from runner.tables.store import table_keys

    asked, wanted = question(rows)
    loaded = load_pipeline(pipeline)
    options: Any = loaded.tools[0].options
    started = time.perf_counter()
    index = table_keys(loaded, options)
    found = [row["codename"] for row in index.rows_for(*index.find(asked))]
    listed = known_values(loaded, asked)
    seconds = time.perf_counter() - started
    if sorted(found) != sorted(wanted) or not listed:
        raise SystemExit(f"{pipeline}: found {found}, listed {listed}")
    return {"seconds": round(seconds, 4), "index": type(index).__name__}


def in_process(pipeline: Path, rows: int) -> dict[str, Any]:
    command = [sys.executable, "-m", "bench.tables", "--in-process", str(pipeline), str(rows)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=900, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{pipeline}: {done.stderr[-3000:]}")
    return json.loads(done.stdout)


def _cap_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def measure(pipeline: Path, rows: int, repeats: int) -> dict[str, Any]:
    runs = [run_once(pipeline, rows) for _ in range(repeats)]
    return {
        "seconds": statistics.median(run["seconds"] for run in runs),
        "peak_mb": max(run["peak_mb"] for run in runs),
        "warned": all(run["warned"] for run in runs),
        "runs": runs,
    }


def stores(folder: Path) -> list[Path]:
    return sorted((folder / ".runner" / "tables").glob("*.sqlite"))


def bench_size(folder: Path, rows: int, repeats: int) -> dict[str, Any]:
    pipelines = write_case(folder, rows)
    memory = measure(pipelines["memory"], rows, repeats)
    first = measure(pipelines["store"], rows, 1)
    (store,) = stores(folder)
    later = measure(pipelines["store"], rows, repeats)
    memory["in_process"] = in_process(pipelines["memory"], rows)
    later["in_process"] = in_process(pipelines["store"], rows)
    return {
        "rows": rows,
        "table_mb": round((folder / "releases.csv").stat().st_size / 1024**2, 1),
        "store_mb": round(store.stat().st_size / 1024**2, 1),
        "memory": memory,
        "first": first,
        "later": later,
    }


def run(quick: bool = False) -> dict[str, Any]:
    sizes = [size // 100 for size in SIZES] if quick else list(SIZES)
    repeats = 1 if quick else REPEATS
    with tempfile.TemporaryDirectory(prefix="runner-bench-tables-") as name:
        root = Path(name)
        baseline_pipelines = write_case(root / "baseline", 10)
        run_once(baseline_pipelines["store"], 10)  # builds the tiny store: not the baseline's cost
        baseline = measure(baseline_pipelines["store"], 10, repeats)
        cases = [bench_size(root / f"rows{rows}", rows, repeats) for rows in sizes]
    return {
        "date": date.today().isoformat(),
        "python": sys.version.split()[0],
        "cpus": os.cpu_count(),
        "load_average_1min": round(os.getloadavg()[0], 2),
        "repeats": repeats,
        "baseline": baseline,
        "cases": cases,
    }


def render(results: dict[str, Any]) -> str:
    base = results["baseline"]["seconds"]
    rows = []
    for case in results["cases"]:
        for label, key in (
            ("in memory (every run)", "memory"),
            ("store: first run (builds it)", "first"),
            ("store: later run (opens it)", "later"),
        ):
            figures = case[key]
            beyond = figures["seconds"] - base
            ratio = case["memory"]["seconds"] / figures["seconds"]
            inside = figures.get("in_process")
            rows.append(
                [
                    f"{case['rows']:,}",
                    label,
                    f"{figures['seconds']:.2f} s",
                    f"{max(beyond, 0):.2f} s",
                    f"{inside['seconds'] * 1000:,.1f} ms" if inside else "",
                    f"{figures['peak_mb']:,.0f} MB",
                    f"{ratio:.1f}×",
                ]
            )
    header = ["rows", "run", "whole `runner run`", "beyond the baseline", "after the imports"]
    header += ["peak memory", "speed-up"]
    sizes = ", ".join(
        f"{case['rows']:,} rows: CSV {case['table_mb']} MB, store {case['store_mb']} MB"
        for case in results["cases"]
    )
    return f"""`python -m bench.tables` ({results["date"]}; python {results["python"]}, cpus \
{results["cpus"]}, load average {results["load_average_1min"]}). Each figure is one whole
`runner run` of a question naming two rows (`--llm offline --json`), in a fresh process: the
median of {results["repeats"]} (the first run: one), its peak resident memory from the kernel. The
baseline is the same run on a 10-row table: {base:.2f} s and \
{results["baseline"]["peak_mb"]:.0f} MB, Python's start, the imports, the pipeline and the
offline LLM; "beyond the baseline" is what the table costs (a negative difference, the noise of
a shared machine, shows as 0). "After the imports" is timed inside a fresh Python that has
imported runner: opening the index (or, in memory, reading and indexing the table), finding the
question's keys, reading their rows and the extraction prompt's listing. "In memory" is the run
where the store cannot be written (`state_dir:` is a file), which indexes the table in every
process, as every run did before the store. Speed-up: the in-memory run's time over this
one's. Sizes: {sizes}. Raw figures: `bench/results/tables.json`.

{table(header, rows)}
"""


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.tables")
    parser.add_argument("--quick", action="store_true", help="tables 100 times smaller")
    parser.add_argument("--child", nargs=2, metavar=("PIPELINE", "ROWS"), help=argparse.SUPPRESS)
    parser.add_argument(
        "--in-process", nargs=2, metavar=("PIPELINE", "ROWS"), help=argparse.SUPPRESS
    )
    options = parser.parse_args(argv or [])
    if options.child:
        print(json.dumps(child(Path(options.child[0]), int(options.child[1]))))
        return
    if options.in_process:
        pipeline, rows = options.in_process
        print(json.dumps(child_in_process(Path(pipeline), int(rows))))
        return
    results = run(quick=options.quick)
    print(render(results))
    if not options.quick:
        write_results("tables", results)
        write_section(TITLE, render(results))


if __name__ == "__main__":
    main(sys.argv[1:])
