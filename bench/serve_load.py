"""A serving benchmark's load: conversations of three rounds sent to the workers over HTTP (or
to the Service in process), paced like users or all at once; the figures of a run (round time,
overhead over the LLM's critical path, percentiles) and the store read back for sessions lost
or run twice."""

from __future__ import annotations

import asyncio
import random
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bench.serve_worker import LLM_CALLS

CONVERSATION = (
    ("What warranty do I get on my washing machine?", "clarification"),
    ("It is a KW-720X", "answer"),
    ("How long is the warranty on my KF-780X?", "answer"),
)


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
        LLM_CALLS.set([])
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
