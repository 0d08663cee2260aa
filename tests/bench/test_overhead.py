"""The engine-overhead benchmark on tiny trees: every system builds the same shapes."""

from __future__ import annotations

import asyncio

import pytest

from bench import overhead, overhead_report


@pytest.mark.parametrize("shape", overhead.SHAPES)
@pytest.mark.parametrize("system", list(overhead.SYSTEMS))
def test_each_system_runs_each_shape(system: str, shape: str):
    if system == "langgraph":
        # LangGraph is in the bench-only extra (`make bench` installs it), not in `dev`
        pytest.importorskip("langgraph")
    run = overhead.SYSTEMS[system](6, shape)
    asyncio.run(run())  # runner's checks that every task node closed


@pytest.mark.parametrize("shape", overhead.SHAPES)
def test_the_asyncio_floor_awaits_one_coroutine_a_node(shape: str, monkeypatch):
    awaited = []
    real = asyncio.gather

    async def counting_gather(*coroutines):
        awaited.append(len(coroutines))
        return await real(*coroutines)

    monkeypatch.setattr(asyncio, "gather", counting_gather)
    asyncio.run(overhead.asyncio_round(7, shape)())  # raises unless 7 nodes ran
    assert awaited == ([7] if shape == "wide" else [])


def test_a_deep_tree_deeper_than_the_recursion_limit_closes():
    # 1,200 levels: more than Python's default recursion limit of 1,000 frames
    asyncio.run(overhead.runner_round(1_200, "deep")())


def test_the_report_has_a_row_per_shape_and_size():
    rows = asyncio.run(overhead.measure(["runner", "asyncio"], [3, 5], budget=10))
    assert [(row["shape"], row["nodes"]) for row in rows] == [
        ("wide", 3),
        ("wide", 5),
        ("deep", 3),
        ("deep", 5),
    ]
    results = {
        "date": "today",
        "command": "test",
        "machine": {"cpus": 2},
        "systems": ["runner", "asyncio"],
        "rows": rows,
        "linearity": overhead.linearity(rows, "runner"),
        "profile": overhead.profile_round(5, "wide", top=3),
        "target_us_per_node": overhead.TARGET_US_PER_NODE,
        "sampling": overhead.SAMPLING,
    }
    text = overhead_report.section(results)
    assert "| wide | 5 |" in text
    assert text.count("| `") == 3  # the profile's functions


def test_the_profile_names_the_functions_with_the_most_own_time():
    profile = overhead.profile_round(20, "wide", top=5)
    assert len(profile["top"]) == 5
    shares = [entry["share"] for entry in profile["top"]]
    assert shares == sorted(shares, reverse=True)
    assert profile["calls_per_node"] > 0


def test_a_deep_tree_stands_for_execution_text_that_grows_with_its_depth():
    shallow, deep = overhead.runner_round(10, "deep"), overhead.runner_round(40, "deep")
    asyncio.run(shallow())
    asyncio.run(deep())
    # C20a: level d carries the d prompts above it, so 4x the depth is about 16x the text
    assert deep.text_chars > 10 * shallow.text_chars


def test_each_row_has_runners_cpu_time_per_node_beside_its_wall_time():
    # the machine is shared: CPU time is what other work slows less, so the report gives both
    rows = asyncio.run(overhead.measure(["runner"], [4], budget=4))
    assert all(row["runner_cpu_us"] > 0 for row in rows)
    results = {
        "date": "today",
        "command": "test",
        "machine": {"cpus": 2},
        "systems": ["runner"],
        "rows": rows,
        "linearity": {},
        "profile": overhead.profile_round(5, "wide", top=1),
        "target_us_per_node": overhead.TARGET_US_PER_NODE,
        "sampling": overhead.SAMPLING,
    }
    assert "runner CPU µs/node" in overhead_report.section(results)
