"""A serving benchmark's worker: `runner serve`'s app on the support pipeline, its LLM the
simulated one (bench/simllm.py), timed from inside so that the LLM's own time on a round's
critical path can be told apart from what the service adds; and the worker processes, started
and waited for.

A worker process is `python -m bench.serve --worker PORT` (bench.serve keeps that entry, so that
a paired run can start the workers of an older commit, whose bench.serve has it too).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Sequence
from contextvars import ContextVar
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


SUPPORT = ROOT / "pipelines" / "support" / "support.yaml"


# the LLM calls of the request running in this context: (start, nominal end) in seconds
LLM_CALLS: ContextVar[list[tuple[float, float]] | None] = ContextVar("bench_calls", default=None)


def simulated_service(state: str, latency_s: float) -> tuple[Any, dict[str, float]]:
    """The support pipeline's Service on the simulated LLM, and the LLM critical path of each
    round it runs (`session/round` -> ms), filled in as rounds end."""
    from bench.simllm import SimProvider, SimulatedLLM
    from runner.config.model import LLMConfig
    from runner.llm.client import ProviderClient
    from runner.service.pipelines import Service

    class TimedProvider(SimProvider):
        async def generate(self, request: Any, settings: Any) -> Any:
            calls = LLM_CALLS.get()
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
        critical[f"{result['session']}/{result['round']}"] = union_ms(LLM_CALLS.get() or [])

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
            LLM_CALLS.set([])
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
