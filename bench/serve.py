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
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SUPPORT = ROOT / "pipelines" / "support" / "support.yaml"
TITLE = "Serving: rounds over HTTP, two workers on PostgreSQL"
CONVERSATION = (
    ("What warranty do I get on my washing machine?", "clarification"),
    ("It is a KW-720X", "answer"),
    ("How long is the warranty on my KF-780X?", "answer"),
)
TARGETS = {"p50_overhead_ms": 10.0, "p99_overhead_ms": 50.0, "lost": 0, "duplicated": 0}


# --- a worker: runner serve's app, its LLM the simulated one --------------------------------

# the LLM calls of the request running in this context: (start, nominal end) in seconds
_CALLS: ContextVar[list[tuple[float, float]] | None] = ContextVar("bench_calls", default=None)


def simulated_service(state: str, latency_s: float) -> tuple[Any, dict[str, float]]:
    """The support pipeline's Service on the simulated LLM, and the LLM critical path of each
    round it runs (`session/round` -> ms), filled in as rounds end."""
    from bench.simllm import SimProvider, SimulatedLLM
    from runner.config.model import LLMConfig
    from runner.llm.client import ProviderClient
    from runner.service.pipelines import Service

    class TimedProvider(SimProvider):
        async def generate(self, request: Any, settings: Any) -> Any:
            calls = _CALLS.get()
            if calls is not None:  # the LLM's own time; any delay past it is the service's
                start = time.perf_counter()
                calls.append((start, start + latency_s))
            return await super().generate(request, settings)

    # no concurrency limit below the load: what the service adds is the question, not a queue
    client = ProviderClient(
        TimedProvider(SimulatedLLM({}, latency_s=latency_s)),
        LLMConfig(provider="simulated", concurrency=4096),
    )
    service = Service.open([SUPPORT], state=state, client=client)
    critical: dict[str, float] = {}

    def observe(_domain: str, result: dict, _events: list, _seconds: float) -> None:
        critical[f"{result['session']}/{result['round']}"] = union_ms(_CALLS.get() or [])

    service.observers.append(observe)
    return service, critical


def worker(port: int, state: str, latency_s: float) -> None:
    import uvicorn
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    from runner.serve.app import create_app

    service, critical = simulated_service(state, latency_s)

    async def critical_paths(_request: Request) -> JSONResponse:
        return JSONResponse(critical)

    app = create_app(service, extra_routes=[Route("/bench/critical", critical_paths)])

    async def with_call_list(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            _CALLS.set([])
        await app(scope, receive, send)

    uvicorn.run(
        with_call_list,
        host="127.0.0.1",
        port=port,
        log_level="warning",
        access_log=False,
        backlog=4096,
        timeout_keep_alive=300,  # the load generator keeps its connections between rounds
    )


def union_ms(spans: Sequence[tuple[float, float]]) -> float:
    """The time at least one call was in flight: the LLM time on the round's critical path."""
    total, end = 0.0, float("-inf")
    for start, stop in sorted(spans):
        if stop > end:
            total += stop - max(start, end)
            end = stop
    return total * 1000


class Workers:
    """Worker processes (this module, `--worker`), started and waited for; `code`: the
    checkout whose runner they run (this one, or another commit's: `checkout`)."""

    def __init__(self, count: int, state: str, latency_s: float, code: Path = ROOT) -> None:
        sys.path.insert(0, str(ROOT / "tests"))
        from serve.server import free_port

        self.ports = [free_port() for _ in range(count)]
        self.processes = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "bench.serve",
                    "--worker",
                    str(port),
                    "--state",
                    state,
                    "--latency",
                    str(latency_s),
                ],
                cwd=code,
                env={**os.environ, "PYTHONPATH": str(code)},
            )
            for port in self.ports
        ]

    def __enter__(self) -> list[str]:
        import httpx

        urls = [f"http://127.0.0.1:{port}" for port in self.ports]
        deadline = time.monotonic() + 120
        for url in urls:
            while True:
                try:
                    if httpx.get(f"{url}/readyz", timeout=1).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                if time.monotonic() > deadline:
                    raise TimeoutError(f"the worker at {url} did not start")
                time.sleep(0.1)
        return urls

    def cpu_s(self) -> float:
        """CPU seconds the workers used so far (user + system)."""
        import psutil

        total = 0.0
        for process in self.processes:
            times = psutil.Process(process.pid).cpu_times()
            total += times.user + times.system
        return total

    def __exit__(self, *_exc: object) -> None:
        for process in self.processes:
            process.terminate()
        for process in self.processes:
            process.wait(60)


# --- the load --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pacing:
    """When users speak: conversations start spread over `ramp_s`, and a user thinks up to
    `think_s` before each later round (seeded, so every setup gets the same schedule). Without
    it every conversation starts at once and all rounds move in lock-step, the worst case."""

    ramp_s: float = 5.0
    think_s: float = 5.0
    seed: int = 14

    def wait_s(self, number: int, turn: int) -> float:
        draw = random.Random(f"{self.seed}/{number}/{turn}").random()
        return draw * (self.ramp_s if turn == 0 else self.think_s)


def round_row(result: dict[str, Any], expected: str, waited_ms: float) -> dict[str, Any]:
    return {
        "key": f"{result['session']}/{result['round']}",
        "session": result["session"],
        "outcome": result["outcome"],
        "expected": expected,
        "round_ms": waited_ms,
        "engine_ms": result["stats"]["wall_ms"],
        "llm_calls": result["stats"]["llm_calls"],
    }


async def pause(pacing: Pacing | None, number: int, turn: int) -> None:
    if pacing is not None:
        await asyncio.sleep(pacing.wait_s(number, turn))


async def conversation(
    client: Any, urls: Sequence[str], number: int, pacing: Pacing | None
) -> list[dict[str, Any]]:
    rounds: list[dict[str, Any]] = []
    session: str | None = None
    for turn, (message, expected) in enumerate(CONVERSATION):
        await pause(pacing, number, turn)
        url = urls[(number + turn) % len(urls)]
        body: dict[str, Any] = {"message": message, "request_id": f"c{number}-r{turn}"}
        if session is not None:
            body["session_id"] = session
        started = time.perf_counter()
        async with client.post(f"{url}/v1/pipelines/support/rounds", json=body) as response:
            status, result = response.status, await response.json()
        waited_ms = (time.perf_counter() - started) * 1000
        if status != 200:
            raise RuntimeError(f"round {turn + 1} of conversation {number}: {result}")
        session = result["session"]
        rounds.append(round_row(result, expected, waited_ms))
    return rounds


async def in_process(service: Any, number: int, pacing: Pacing | None) -> list[dict[str, Any]]:
    """The same conversation on the Service itself: no HTTP, no other process."""
    rounds: list[dict[str, Any]] = []
    session: str | None = None
    for turn, (message, expected) in enumerate(CONVERSATION):
        await pause(pacing, number, turn)
        _CALLS.set([])
        started = time.perf_counter()
        result = await service.run_round(
            "support", message, session_id=session, request_id=f"c{number}-r{turn}"
        )
        waited_ms = (time.perf_counter() - started) * 1000
        session = result["session"]
        rounds.append(round_row(result, expected, waited_ms))
    return rounds


def with_critical(rounds: list[dict[str, Any]], critical: dict[str, float]) -> None:
    for r in rounds:
        r["llm_ms"] = critical[r["key"]]
        r["overhead_ms"] = r["round_ms"] - r["llm_ms"]
        r["engine_ms"] -= r["llm_ms"]


async def load(
    urls: Sequence[str], conversations: int, pacing: Pacing | None = None
) -> dict[str, Any]:
    # aiohttp rather than httpx for the load: its client costs a few times less CPU a request,
    # and the load generator shares the machine with the workers it measures
    import aiohttp

    connector = aiohttp.TCPConnector(limit=0)
    timeout = aiohttp.ClientTimeout(total=300)
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as client:
        started = time.perf_counter()
        done = await asyncio.gather(
            *(conversation(client, urls, n, pacing) for n in range(conversations))
        )
        elapsed = time.perf_counter() - started
        critical: dict[str, float] = {}
        for url in urls:
            async with client.get(f"{url}/bench/critical") as response:
                critical.update(await response.json())
    rounds = [r for each in done for r in each]
    with_critical(rounds, critical)
    return {
        "elapsed_s": elapsed,
        "rounds": rounds,
        "sessions": [each[0]["session"] for each in done],
    }


def check_store(store: Any, sessions: Sequence[str]) -> dict[str, int]:
    """Sessions lost (missing, or short of their rounds) and duplicated (a round run twice, an
    extra session), from the store itself."""
    expected = [outcome for _message, outcome in CONVERSATION]
    lost = duplicated = 0
    for session in sessions:
        rounds = store.rounds(session)
        outcomes = [record.outcome for record in rounds]
        lost += outcomes[: len(expected)] != expected[: len(outcomes)] or len(rounds) < 3
        duplicated += len(rounds) > 3
    duplicated += max(0, len(store.sessions()) - len(sessions))
    return {"lost": int(lost), "duplicated": int(duplicated)}


def figures(run: dict[str, Any]) -> dict[str, Any]:
    rounds = run["rounds"]
    overhead = sorted(r["overhead_ms"] for r in rounds)
    round_ms = sorted(r["round_ms"] for r in rounds)
    llm_ms = sorted(r["llm_ms"] for r in rounds)
    wrong = sum(r["outcome"] != r["expected"] for r in rounds)
    return {
        "rounds": len(rounds),
        "rounds_per_s": round(len(rounds) / run["elapsed_s"], 1),
        "round_ms_p50": round(_percentile(round_ms, 50), 1),
        "round_ms_p99": round(_percentile(round_ms, 99), 1),
        "llm_ms_p50": round(_percentile(llm_ms, 50), 1),
        "overhead_ms_p50": round(_percentile(overhead, 50), 1),
        "overhead_ms_p99": round(_percentile(overhead, 99), 1),
        "overhead_ms_mean": round(statistics.fmean(overhead), 1),
        "in_round_ms_p50": round(_percentile(sorted(r["engine_ms"] for r in rounds), 50), 1),
        "llm_calls": sum(r["llm_calls"] for r in rounds),
        "unexpected_outcomes": wrong,
    }


def _percentile(values: Sequence[float], percent: float) -> float:
    index = min(len(values) - 1, max(0, round(percent / 100 * len(values)) - 1))
    return values[index]


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


TABLE_HEAD = (
    "| setup | arrivals | rounds/s | round ms p50 / p99 | LLM ms p50 "
    "| overhead ms p50 / p99 | CPU ms a round: workers / client | lost / duplicated |\n"
    "|---|---|---|---|---|---|---|---|"
)


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


def paired_section(results: dict[str, Any]) -> str:
    """The before/after table of a paired run (`--against`)."""
    rows = "\n".join(
        f"| {r['pair']} | {r['setup']} | **{r['overhead_ms_p50']}** / **{r['overhead_ms_p99']}** "
        f"| {r['worker_cpu_ms_per_round']} | {r['round_ms_p50']} / {r['round_ms_p99']} "
        f"| {r['lost']} / {r['duplicated']} | {r['load_average_1min']} |"
        for r in results["paired"]
    )
    return "\n".join(
        [
            f"Before and after, paired in one run (`--against {results['against']}`): 2 workers "
            "on PostgreSQL, paced, the other commit's workers then this one's, in turn (A B A B), "
            "each on a fresh database; the load average is the machine's after each run.",
            "",
            "| pair | code | overhead ms p50 / p99 | CPU ms a round: workers | round ms p50 / p99 "
            "| lost / duplicated | load (1 min) |",
            "|---|---|---|---|---|---|---|",
            rows,
        ]
    )


def section(results: dict[str, Any]) -> str:
    rows = "\n".join(
        f"| {r['setup']} | {r['arrivals']} | {r['rounds_per_s']} "
        f"| {r['round_ms_p50']} / {r['round_ms_p99']} | {r['llm_ms_p50']} "
        f"| **{r['overhead_ms_p50']}** / **{r['overhead_ms_p99']}** "
        f"| {r['worker_cpu_ms_per_round']} / {r['client_cpu_ms_per_round']} "
        f"| {r['lost']} / {r['duplicated']} |"
        for r in results["runs"]
    )
    targets, host = results["targets"], results["machine"]
    return "\n".join(
        [
            f"`{results['command']}` · {results['date']} · {host['cpus']} CPUs, load "
            f"{host['load_average_1min']} at the start.",
            "",
            f"{results['conversations']} concurrent conversations × 3 rounds (one asks a "
            "clarifying question) on the support pipeline; round r of conversation c goes to "
            f"worker (c + r) mod 2; the simulated LLM answers in {results['latency_s']} s inside "
            "each worker. Overhead = the time the client waited for a round − the LLM time on its "
            "critical path (the time one of its calls was in flight, each at its nominal "
            f"latency); target ≤ {targets['p50_overhead_ms']:g} ms p50, "
            f"≤ {targets['p99_overhead_ms']:g} ms p99. Lost / duplicated: conversations whose "
            "stored rounds are missing or were run twice, read back from the store (target 0). "
            "CPU ms a round: what the workers and the load generator spent per round (user + "
            "system), the figure that carries over to another machine. The in-process rows run "
            "the same conversations on the Service object itself (no HTTP, no other process) "
            "in the same run: the difference to them is what serving over HTTP adds; their own "
            "overhead is the engine and the store, and the machine's load (other work shared "
            "its 2 CPUs). Arrivals: *paced* conversations start spread over "
            f"{results['pacing']['ramp_s']:g} s and their users think up to "
            f"{results['pacing']['think_s']:g} s before each later round (the same seeded "
            "schedule for every setup); *all at once* starts every conversation in the same "
            "instant, so that all rounds move in lock-step — the worst case, where each round "
            "waits for the CPU work of all the others.",
            "",
            TABLE_HEAD,
            rows,
            "",
            "What limits the figures: the 2 CPUs are shared — by the workers, PostgreSQL, the "
            "load generator and, on this machine, other work (the load average above) — and a "
            "worker's round is a few milliseconds of CPU in one event loop, so a round waits "
            "for the CPU work of the rounds beside it. The CPU per round, not the latency, is "
            "the figure to size a deployment by (docs/serve.md, Scaling out).",
            *(["", paired_section(results)] if results.get("paired") else []),
        ]
    )


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
        "runs": runs,
        "targets": TARGETS,
        **({"against": args.against, "paired": paired} if paired else {}),
    }
    results["stamp"] = stamp()  # taken once: the results file and the README say the same
    write_results("serve", results)
    write_section(TITLE, section(results), stamped=results)
    print(section(results))


if __name__ == "__main__":
    main(sys.argv[1:])
