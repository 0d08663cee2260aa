"""What waking from idle costs on this machine, measured beside the serving benchmark: why a
paced round costs more CPU than the same round run back to back.

A served round is many short pieces of work, each started by a wake: the event loop's (an LLM
reply, a store call's result), a worker thread's (a hop off the loop). Run back to back (the
zero-latency runs of bench.serve_cpu) the pieces find the processor awake and warm; paced
(bench.serve: users thinking, the LLM answering in 0.1 s) nearly every piece follows an idle
gap. Three figures, each the median of `rounds` tries:

- `sleep_wake_us`: the CPU of one 20 ms `asyncio.sleep` (the loop going idle and waking);
- `hop_us` / `hop_after_idle_us`: the CPU of one hop to a thread pool and back, on a busy loop
  and right after such a sleep (the sleep's own cost taken off);
- `work_after_idle_ratio`: the CPU of the same small piece of Python work (about 0.3 ms) right
  after a 20 ms sleep, over the same piece back to back.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from concurrent.futures import ThreadPoolExecutor

GAP_S = 0.02


def _piece() -> int:
    """A small piece of Python work, of the kind a round's steps do (dicts, strings, JSON)."""
    made = {str(number): [number, "x" * (number % 7)] for number in range(300)}
    return len(json.dumps(made))


async def _measure(tries: int) -> dict[str, float]:
    loop = asyncio.get_running_loop()
    threads = ThreadPoolExecutor(2)

    async def sleep_cpu() -> float:
        started = time.process_time()
        await asyncio.sleep(GAP_S)
        return time.process_time() - started

    async def hop_cpu(after_idle: bool) -> float:
        if after_idle:
            await asyncio.sleep(GAP_S)
        started = time.process_time()
        await loop.run_in_executor(threads, int)
        return time.process_time() - started

    async def piece_cpu(after_idle: bool) -> float:
        if after_idle:
            await asyncio.sleep(GAP_S)
        started = time.process_time()
        _piece()
        return time.process_time() - started

    try:
        sleeps = [await sleep_cpu() for _ in range(tries)]
        hot = [await hop_cpu(False) for _ in range(tries)]
        cold = [await hop_cpu(True) for _ in range(tries)]
        back_to_back = [await piece_cpu(False) for _ in range(tries)]
        after_idle = [await piece_cpu(True) for _ in range(tries)]
    finally:
        threads.shutdown()
    median = statistics.median
    return {
        "sleep_wake_us": round(median(sleeps) * 1e6, 1),
        "hop_us": round(median(hot) * 1e6, 1),
        "hop_after_idle_us": round(median(cold) * 1e6, 1),
        "work_after_idle_ratio": round(median(after_idle) / median(back_to_back), 2),
    }


def wake_costs(tries: int = 50) -> dict[str, float]:
    """The figures of the module's docstring, on this machine as it is now."""
    return asyncio.run(_measure(tries))


if __name__ == "__main__":
    print(json.dumps(wake_costs(), indent=2))
