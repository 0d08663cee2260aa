"""While a round runs, Python's full collections are deferred (what the round makes outlives
it); young collections go on, and the thresholds are put back when the last round ends."""

from __future__ import annotations

import asyncio
import gc
import threading
from collections.abc import Iterator

import pytest

from runner.engine.collector import FULL_DEFERRAL, full_collections_deferred
from runner.engine.results import ToolResult

from .kit import FakeTool


@pytest.fixture
def thresholds() -> Iterator[tuple[int, int, int]]:
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield gc.get_threshold()
    gc.set_threshold(*saved)


def test_a_round_runs_with_full_collections_deferred_and_puts_them_back(world, thresholds):
    during: list[tuple[int, int, int]] = []

    def record(call) -> ToolResult:
        during.append(gc.get_threshold())
        return ToolResult.context("seen")

    w = world(FakeTool("tool", record, activation="always"))
    w.run("q")
    assert during == [(700, 10, 10 * FULL_DEFERRAL)]  # young collections as they were
    assert gc.get_threshold() == thresholds


def test_overlapping_rounds_put_the_thresholds_back_when_the_last_one_ends(thresholds):
    first_in, second_in, first_out = asyncio.Event(), asyncio.Event(), asyncio.Event()
    seen: dict[str, tuple[int, int, int]] = {}

    async def first() -> None:
        with full_collections_deferred():
            first_in.set()
            await second_in.wait()
        first_out.set()

    async def second() -> None:
        await first_in.wait()
        with full_collections_deferred():
            second_in.set()
            await first_out.wait()
            seen["after the first ended"] = gc.get_threshold()

    async def both() -> None:
        await asyncio.gather(first(), second())

    asyncio.run(both())
    assert seen["after the first ended"] == (700, 10, 10 * FULL_DEFERRAL)
    assert gc.get_threshold() == thresholds


def test_rounds_in_threads_share_one_deferral(thresholds):
    inside = threading.Barrier(2)

    def round_in_a_thread() -> None:
        with full_collections_deferred():
            inside.wait(timeout=10)

    threads = [threading.Thread(target=round_in_a_thread) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert gc.get_threshold() == thresholds


def test_thresholds_set_while_a_round_ran_are_left_as_they_were_set(thresholds):
    with full_collections_deferred():
        gc.set_threshold(5000, 20, 20)
    assert gc.get_threshold() == (5000, 20, 20)
