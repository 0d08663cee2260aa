"""`python -m bench.serve_cpu`: where a served round's CPU goes — the corpus searches, the
session store's calls, and the rest (the engine, the prompts, the service) — on the Service
object itself, in one process.

The bench.serve conversations (the support pipeline, the simulated LLM, here at zero latency: the
figure is CPU, not waiting), one after another on SQLite, measured twice in turn (A B A B):

- *as served*: every round as a worker runs it;
- *searches replayed*: the same rounds, each corpus search (and each cosine of a question with
  a page) answered from a record of what the same call returned before, so that the rounds run
  the same steps with the same pages and nothing else changes.

The difference is what the searches cost a round. The store's share is the CPU of its calls
(lock, reads, the round's one save), timed on the thread each ran on.

    python -m bench.serve_cpu [--conversations 50] [--pairs 2]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from bench.serve_load import CONVERSATION
from bench.serve_worker import simulated_service

# the store's calls a round makes, whichever store it is (SQLiteStore, PostgresStore)
STORE_CALLS = ("try_lock", "committed", "open", "save")


class ThreadCPU:
    """CPU seconds spent inside wrapped calls, each timed on the thread it ran on."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._adding = threading.Lock()  # the store's calls run on several threads

    def timed(self, call: Callable[..., Any]) -> Callable[..., Any]:
        def timed_call(*args: Any, **kwargs: Any) -> Any:
            started = time.thread_time()
            try:
                return call(*args, **kwargs)
            finally:
                spent = time.thread_time() - started
                with self._adding:
                    self.seconds += spent

        return timed_call


class Replayed:
    """A corpus index whose searches and cosines are answered from a record of the same calls'
    results once `replaying` (the first call of each runs for real and is recorded)."""

    def __init__(self, index: Any) -> None:
        self.index = index
        self.replaying = False
        self._record: dict[tuple[Any, ...], Any] = {}
        self._search = index.search
        self._cosine = index.cosine

    def search(self, query: str, top_k: int, **options: Any) -> list[Any]:
        key = ("search", query, top_k, tuple(sorted(options.items())))
        return list(self._answer(key, lambda: self._search(query, top_k, **options)))

    def cosine(self, query: str, node_id: str) -> float | None:
        found: float | None = self._answer(
            ("cosine", query, node_id), lambda: self._cosine(query, node_id)
        )
        return found

    def _answer(self, key: tuple[Any, ...], run: Callable[[], Any]) -> Any:
        if not self.replaying or key not in self._record:
            self._record[key] = run()
        return self._record[key]

    @contextmanager
    def installed(self) -> Iterator[Replayed]:
        """The index's own methods shadowed by this record's, on that one index object."""
        self.index.search, self.index.cosine = self.search, self.cosine
        try:
            yield self
        finally:
            del self.index.search, self.index.cosine


async def conversations(service: Any, first: int, count: int) -> None:
    for number in range(first, first + count):
        session: str | None = None
        for turn, (message, _expected) in enumerate(CONVERSATION):
            result = await service.run_round(
                "support", message, session_id=session, request_id=f"c{number}-r{turn}"
            )
            session = result["session"]


def measure(conversations_per_run: int, pairs: int, state: str) -> dict[str, Any]:
    """A warm-up run (every search recorded), then `pairs` times a run as served and a run with
    the searches replayed, each of `conversations_per_run` new conversations."""
    service, _critical = simulated_service(state, 0.0)
    loop = asyncio.new_event_loop()
    try:
        runtime = service.runtimes["support"]
        indexes = [Replayed(runtime.corpus(name)) for name in runtime.pipeline.corpora]
        store_cpu = ThreadCPU()
        store = service.stores["support"]
        for name in STORE_CALLS:  # on this store object only
            setattr(store, name, store_cpu.timed(getattr(store, name)))
        with _installed(indexes):
            loop.run_until_complete(conversations(service, 0, conversations_per_run))
            runs = [
                _run(loop, service, indexes, store_cpu, pair, replaying, conversations_per_run)
                for pair in range(1, pairs + 1)
                for replaying in (False, True)
            ]
    finally:
        loop.close()
        service.close()
    return {"conversations": conversations_per_run, "runs": runs, **summary(runs)}


def _run(
    loop: asyncio.AbstractEventLoop,
    service: Any,
    indexes: Sequence[Replayed],
    store_cpu: ThreadCPU,
    pair: int,
    replaying: bool,
    count: int,
) -> dict[str, Any]:
    for index in indexes:
        index.replaying = replaying
    first = count * (2 * pair - 1 + replaying)  # new conversations: none is a replay
    store_before, cpu = store_cpu.seconds, time.process_time()
    loop.run_until_complete(conversations(service, first, count))
    cpu = time.process_time() - cpu
    rounds = count * len(CONVERSATION)
    return {
        "pair": pair,
        "searches": "replayed" if replaying else "as served",
        "cpu_ms_per_round": _ms(cpu, rounds),
        "store_ms_per_round": _ms(store_cpu.seconds - store_before, rounds),
        "load_average_1min": round(os.getloadavg()[0], 2),
    }


@contextmanager
def _installed(indexes: Sequence[Replayed]) -> Iterator[None]:
    if not indexes:
        yield
        return
    with indexes[0].installed(), _installed(indexes[1:]):
        yield


def _ms(seconds: float, rounds: int) -> float:
    return round(seconds * 1000 / rounds, 2)


def summary(runs: Sequence[dict[str, Any]]) -> dict[str, float]:
    """The medians over the pairs: CPU a round as served, what the searches took of it, the
    store's calls, and the rest."""
    served = _median([r["cpu_ms_per_round"] for r in runs if r["searches"] == "as served"])
    replayed = _median([r["cpu_ms_per_round"] for r in runs if r["searches"] == "replayed"])
    store = _median([r["store_ms_per_round"] for r in runs])
    return {
        "cpu_ms_per_round": served,
        "searches_ms_per_round": round(served - replayed, 2),
        "store_ms_per_round": store,
        "rest_ms_per_round": round(replayed - store, 2),
    }


def _median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return round((ordered[middle - 1] + ordered[middle]) / 2, 2)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.serve_cpu")
    parser.add_argument("--conversations", type=int, default=50, help="per run (3 rounds each)")
    parser.add_argument("--pairs", type=int, default=2, help="as served / replayed pairs")
    args = parser.parse_args(argv or [])
    with tempfile.TemporaryDirectory() as folder:
        result = measure(args.conversations, args.pairs, os.path.join(folder, "s.sqlite"))
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main(sys.argv[1:])
