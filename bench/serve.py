"""`python -m bench serve`: `runner serve` under load — two workers sharing one PostgreSQL, and
one worker on SQLite beside it.

200 conversations at once, three rounds each on the support pipeline (a warranty question that
asks for the model, the answer to it, then a direct warranty question), each round sent to a
worker in turn (round r of conversation c goes to worker (c + r) mod 2: any round, any
worker). The LLM is the simulated one (bench/simllm.py) at 0.1 s a call, inside each worker.

Per round: the time the client waited, and the LLM time on its critical path (the time at least
one of the round's LLM calls was in flight, each call counted at its nominal latency, measured
in the worker).
What the service adds is the difference: HTTP, JSON, the session store, locks, the engine.
Afterwards the store is read back: every conversation must have exactly its three rounds with
their outcomes (none lost, none run twice).

    python -m bench.serve [--conversations 200] [--latency 0.1] [--against REF [--pairs 2]]

`--against REF` measures the code of another commit beside this one: the paced run on two
workers and PostgreSQL, the other commit's workers then this one's, `--pairs` times in turn
(A B A B), in the same run and on the same load.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import Any

from bench import serve_cpu
from bench.serve_load import Pacing, check_store, figures, in_process, load, with_critical
from bench.serve_report import section
from bench.serve_wakes import wake_costs
from bench.serve_worker import ROOT, SUPPORT, Workers, simulated_service, worker

TITLE = "Serving: rounds over HTTP, two workers on PostgreSQL"


TARGETS = {
    "p50_overhead_ms": 10.0,
    "p99_overhead_ms": 50.0,
    "cpu_ms_per_round": 5.0,
    "lost": 0,
    "duplicated": 0,
}
BACK_TO_BACK = {"conversations": 50, "pairs": 2}  # bench.serve_cpu's run, as its defaults


def measure(
    label: str,
    workers: int,
    state: str,
    conversations: int,
    latency_s: float,
    pacing: Pacing | None = None,
    code: Path = ROOT,
) -> dict:
    from runner.sessions import open_store

    started = Workers(workers, state, latency_s, code)
    with started as urls:
        idle_cpu = started.cpu_s()
        client_cpu = time.process_time()
        run = asyncio.run(load(urls, conversations, pacing))
        client_cpu = time.process_time() - client_cpu
        worker_cpu = started.cpu_s() - idle_cpu
    with open_store(state) as store:
        integrity = check_store(store, run["sessions"])
    rounds = len(run["rounds"])
    result = {
        "setup": label,
        "workers": workers,
        "conversations": conversations,
        "arrivals": "paced" if pacing else "all at once",
        **figures(run),
        **integrity,
        "worker_cpu_ms_per_round": round(worker_cpu * 1000 / rounds, 1),
        "client_cpu_ms_per_round": round(client_cpu * 1000 / rounds, 1),
    }
    print(json.dumps(result), flush=True)
    return result


def measure_in_process(
    state: str, conversations: int, latency_s: float, pacing: Pacing | None = None
) -> dict[str, Any]:
    """The baseline of the same run: the Service called directly, one process, SQLite."""
    service, critical = simulated_service(state, latency_s)

    async def run() -> dict[str, Any]:
        started = time.perf_counter()
        done = await asyncio.gather(*(in_process(service, n, pacing) for n in range(conversations)))
        return {"elapsed_s": time.perf_counter() - started, "done": done}

    cpu = time.process_time()
    outcome = asyncio.run(run())
    cpu = time.process_time() - cpu
    rounds = [r for each in outcome["done"] for r in each]
    with_critical(rounds, critical)
    integrity = check_store(
        service.stores["support"], [each[0]["session"] for each in outcome["done"]]
    )
    service.close()
    result = {
        "setup": "in process, no HTTP (SQLite)",
        "workers": 0,
        "conversations": conversations,
        "arrivals": "paced" if pacing else "all at once",
        **figures({"elapsed_s": outcome["elapsed_s"], "rounds": rounds}),
        **integrity,
        "worker_cpu_ms_per_round": round(cpu * 1000 / len(rounds), 1),
        "client_cpu_ms_per_round": 0.0,
    }
    print(json.dumps(result), flush=True)
    return result


def checkout(ref: str, folder: Path) -> Path:
    """The files of commit `ref` (as git archives them) in `folder`: the code to pair against."""
    archive = subprocess.run(
        ["git", "archive", "--format=tar", ref], cwd=ROOT, capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    # the support pipeline's indexes: this checkout's as a start (git keeps none), brought up to
    # date by that commit's own code before its workers start, so that they do not each build
    # them at once
    built = SUPPORT.parent / ".runner"
    if built.is_dir():
        shutil.copytree(built, folder / SUPPORT.relative_to(ROOT).parent / ".runner")
    subprocess.run(
        [
            sys.executable,
            "-c",
            "from runner.cli import main; main()",
            "index",
            str(SUPPORT.relative_to(ROOT)),
        ],
        cwd=folder,
        env={**os.environ, "PYTHONPATH": str(folder)},
        check=True,
        capture_output=True,
    )
    return folder


def measure_paired(
    postgres: Any, against: str, pairs: int, conversations: int, latency_s: float, pacing: Pacing
) -> list[dict[str, Any]]:
    """The paced run on 2 workers and PostgreSQL, commit `against`'s code then this one's,
    `pairs` times in turn (A B A B): the same load, the machine's load shared alike."""
    runs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as folder:
        before = checkout(against, Path(folder))
        for turn in range(pairs):
            for label, code in ((f"before ({against})", before), ("after (this commit)", ROOT)):
                url = postgres.fresh_database(f"bench_pair_{turn}_{len(runs)}")
                run = measure(label, 2, url, conversations, latency_s, pacing, code)
                runs.append({**run, "pair": turn + 1, "load_average_1min": _load()})
    return runs


def _load() -> float:
    return round(os.getloadavg()[0], 2)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.serve")
    parser.add_argument("--conversations", type=int, default=200)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--against", metavar="REF", help="a commit to measure beside this one")
    parser.add_argument("--pairs", type=int, default=2, help="before/after pairs (--against)")
    parser.add_argument("--worker", type=int, metavar="PORT", help=argparse.SUPPRESS)
    parser.add_argument("--state", help=argparse.SUPPRESS)
    args = parser.parse_args(argv or [])
    if args.worker is not None:
        worker(args.worker, args.state, args.latency)
        return
    from bench.readme import stamp, write_results, write_section
    from bench.retrieval import machine

    sys.path.insert(0, str(ROOT / "tests"))
    from pgserver import PostgresServer

    count, latency, paced = args.conversations, args.latency, Pacing()
    wakes = wake_costs()  # before the runs: the machine as they find it
    with tempfile.TemporaryDirectory() as folder:  # what a round's work costs, no idle gaps
        back_to_back = serve_cpu.measure(
            BACK_TO_BACK["conversations"], BACK_TO_BACK["pairs"], os.path.join(folder, "s.sqlite")
        )
    runs, paired = [], []
    with PostgresServer(max_connections=100) as postgres:
        if args.against:
            paired = measure_paired(postgres, args.against, args.pairs, count, latency, paced)
        for name, pacing in (("paced", paced), ("burst", None)):
            url = postgres.fresh_database(f"bench_{name}")
            runs.append(measure("2 workers, PostgreSQL", 2, url, count, latency, pacing))
    for pacing in (paced, None):
        with tempfile.TemporaryDirectory() as folder:
            state = os.path.join(folder, "state.sqlite")
            runs.append(measure("1 worker, SQLite", 1, state, count, latency, pacing))
        with tempfile.TemporaryDirectory() as folder:
            runs.append(
                measure_in_process(os.path.join(folder, "s.sqlite"), count, latency, pacing)
            )
    results = {
        "date": date.today().isoformat(),
        "command": "python -m bench serve" + "".join(f" {arg}" for arg in (argv or [])),
        "machine": machine(),
        "conversations": args.conversations,
        "latency_s": args.latency,
        "pacing": {"ramp_s": paced.ramp_s, "think_s": paced.think_s},
        "wakes": wakes,
        "runs": runs,
        "back_to_back": {key: value for key, value in back_to_back.items() if key != "runs"},
        "targets": TARGETS,
        **({"against": args.against, "paired": paired} if paired else {}),
    }
    results["stamp"] = stamp()  # taken once: the results file and the README say the same
    write_results("serve", results)
    write_section(TITLE, section(results), stamped=results)
    print(section(results))


if __name__ == "__main__":
    main(sys.argv[1:])
