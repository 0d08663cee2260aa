"""Engine overhead: what the orchestrator itself costs per task node, with an LLM that answers at
once, against LangGraph on the same graph and `asyncio` as the floor.

    python -m bench.overhead [--sizes 10,100,1000,10000] [--no-langgraph]

Two shapes of N task nodes:
- wide: the root and N-1 subtasks under it (LangGraph: a node that fans out N-1 `Send`s to a
  no-op node; asyncio: `gather` of N no-op coroutines);
- deep: a chain of N tasks, each the only subtask of the one before (LangGraph: N no-op nodes
  joined by edges; asyncio: N no-op coroutines awaited one after another).

runner's tree is made by one Python coordinator in a single decomposition; every subtask is
forced onto a no-op tool (C13), so each node goes through the whole per-task path: the
coordinator step (C8–C12: skipped, already applied), its subtasks (C5), forced activation, one
tool run, the buffer and the trace. The round ends with one (zero-latency) answer call. The
figure is the round's wall time divided by N. LangGraph's graph is compiled outside the timing.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import gc
import operator
import pstats
import statistics
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypedDict

from bench.overhead_report import section
from bench.readme import stamp, write_results, write_section
from bench.simllm import SimulatedLLM
from runner.config.model import (
    Activation,
    ActivationMode,
    Limits,
    Pipeline,
    PythonOptions,
    ToolConfig,
    ToolKind,
)
from runner.engine.protocols import ToolEnv
from runner.engine.results import ToolResult
from runner.engine.task import Task

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig

TITLE = "Engine overhead: runner, LangGraph and asyncio"
SIZES = (10, 100, 1_000, 10_000)
SHAPES = ("wide", "deep")
TARGET_US_PER_NODE = 30.0
NODES_PER_SAMPLE = 20_000  # small trees are run repeatedly, so every sample is about this big
MIN_SAMPLES = 3
SAMPLING = {"nodes": NODES_PER_SAMPLE, "min_samples": MIN_SAMPLES}  # (what the report says)
COORDINATOR = "tree"
LEAF = "noop"


# --- runner --------------------------------------------------------------------------------------


class TreeCoordinator:
    """Makes the whole tree in one decomposition of the root: N-1 subtasks, wide or deep."""

    name = COORDINATOR

    def __init__(self, config: ToolConfig, nodes: int, shape: str) -> None:
        self.config = config
        self.nodes = nodes
        self.shape = shape

    def decompose(self, task: Task, env: ToolEnv) -> Task:
        if task.task_no != "1":
            return task  # C1: only the root is split
        if self.shape == "wide":
            task.sub_tasks.extend(self._leaf(f"1.{i}") for i in range(1, self.nodes))
            return task
        parent = task
        for level in range(1, self.nodes):
            child = self._leaf(f"1.c{level}")  # short numbers: "1.1.1…" grows with the depth
            parent.sub_tasks.append(child)
            parent = child
        return task

    def execute(self, text: str, env: ToolEnv) -> ToolResult:
        return ToolResult.context("")

    @staticmethod
    def _leaf(task_no: str) -> Task:
        return Task(task_no, f"step {task_no}", required_tool_names={LEAF})


class NoopTool:
    name = LEAF

    def __init__(self, config: ToolConfig) -> None:
        self.config = config

    def execute(self, text: str, env: ToolEnv) -> ToolResult:
        return ToolResult.context("")


def tree_pipeline(nodes: int) -> Pipeline:
    """A pipeline of the coordinator and the no-op tool, its limits raised for N nodes."""
    hidden = Activation(ActivationMode.COORDINATOR_ONLY)
    tools = tuple(
        ToolConfig(name, ToolKind.PYTHON, activation=hidden, options=PythonOptions(f"bench:{name}"))
        for name in (COORDINATOR, LEAF)
    )
    limits = Limits(max_depth=nodes + 1, max_subtasks=nodes + 1)
    return Pipeline(path=Path("overhead.yaml"), domain="bench", tools=tools, limits=limits)


class RunnerRound:
    """One round over a fresh N-node tree (the orchestrator and tools are made once). It keeps
    how much execution text the last tree held: the prompt_context each subtask carries (C20a),
    which grows with the depth."""

    def __init__(self, nodes: int, shape: str) -> None:
        from runner.engine.orchestrator import Orchestrator
        from runner.engine.protocols import Tool
        from runner.llm.prompts import Prompts

        self.nodes, self.shape = nodes, shape
        self.pipeline = tree_pipeline(nodes)
        coordinator, leaf = self.pipeline.tools
        tools: dict[str, Tool] = {
            COORDINATOR: TreeCoordinator(coordinator, nodes, shape),
            LEAF: NoopTool(leaf),
        }
        client = SimulatedLLM({}, latency_s=0.0).runner_client()
        self.orchestrator = Orchestrator(self.pipeline, tools, Prompts(client, self.pipeline))
        self.text_chars = 0
        self.checked = False

    async def __call__(self) -> None:
        from runner.engine.state import SessionState

        state = SessionState.new("overhead", self.pipeline)
        result = await self.orchestrator.run_round(state, "build the tree")
        if not self.checked:  # the first (warm-up) round: the timed ones pay for the round only
            self._check(state, result)

    def _check(self, state: Any, result: Any) -> None:
        if result.outcome != "answer":
            raise RuntimeError(f"the {self.shape} tree of {self.nodes} nodes: {result.error}")
        tasks = list(state.root.walk())
        closed = sum(1 for task in tasks if task.status.value == "done")
        if closed != self.nodes:
            raise RuntimeError(f"{closed} of {self.nodes} task nodes closed: the tree was cut")
        self.text_chars = sum(len(task.held_prompt_context() or "") for task in tasks)
        self.checked = True


def runner_round(nodes: int, shape: str) -> RunnerRound:
    return RunnerRound(nodes, shape)


def gc_paused(make: Callable[[int, str], Callable[[], Awaitable[None]]]) -> Callable[..., Any]:
    """The same rounds with Python's cyclic garbage collector paused: how much of the time per
    node is the collector walking a heap that grows with the tree."""

    def paused(nodes: int, shape: str) -> Callable[[], Awaitable[None]]:
        run = make(nodes, shape)

        async def without_gc() -> None:
            gc.disable()
            try:
                await run()
            finally:
                gc.enable()

        return without_gc

    return paused


# --- LangGraph and asyncio ---------------------------------------------------------------------


class FanState(TypedDict):
    done: Annotated[list[int], operator.add]


def langgraph_round(nodes: int, shape: str) -> Callable[[], Awaitable[None]]:
    """The same N nodes as a LangGraph graph, compiled once."""
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import Send

    async def noop(state: Any) -> dict[str, list[int]]:
        return {"done": []}

    graph = StateGraph(FanState)
    if shape == "wide":
        graph.add_node("root", noop)
        graph.add_node("leaf", noop)
        graph.add_edge(START, "root")
        graph.add_conditional_edges(
            "root", lambda state: [Send("leaf", {"done": []}) for _ in range(nodes - 1)], ["leaf"]
        )
        graph.add_edge("leaf", END)
    else:
        names = [f"n{i}" for i in range(nodes)]
        for name in names:
            graph.add_node(name, noop)
        for before, after in zip([START, *names], [*names, END], strict=True):
            graph.add_edge(before, after)
    compiled = graph.compile()
    config: RunnableConfig = {"recursion_limit": nodes + 10}
    start: FanState = {"done": []}

    async def run() -> None:
        await compiled.ainvoke(start, config=config)

    return run


def asyncio_round(nodes: int, shape: str) -> Callable[[], Awaitable[None]]:
    """The floor: one coroutine a node, all at once (wide) or one after another (deep), each
    one counted, and the count checked as runner's rounds check that every node closed."""
    visited = [0]

    async def node() -> None:
        visited[0] += 1

    async def run() -> None:
        visited[0] = 0
        if shape == "wide":
            await asyncio.gather(*(node() for _ in range(nodes)))
        else:
            for _ in range(nodes):
                await node()
        if visited[0] != nodes:
            raise AssertionError(f"asyncio ran {visited[0]} of {nodes} nodes")

    return run


SYSTEMS: dict[str, Callable[[int, str], Callable[[], Awaitable[None]]]] = {
    "runner": runner_round,
    "langgraph": langgraph_round,
    "asyncio": asyncio_round,
    "runner, GC paused": gc_paused(runner_round),  # a diagnosis, not a way to run runner
}


# --- measuring ----------------------------------------------------------------------------------


async def per_node_us(
    run: Callable[[], Awaitable[None]], nodes: int, budget: int = NODES_PER_SAMPLE
) -> tuple[float, float]:
    """Median µs per node over enough runs (one warm-up run first): at least MIN_SAMPLES, and
    about `budget` nodes in all; of wall time, and of the process's CPU time (which the other
    work of a shared machine slows less)."""
    await run()
    samples = max(MIN_SAMPLES, budget // nodes)
    times, cpu = [], []
    # what every system imported (LangGraph brings langchain-core) is frozen out of the garbage
    # collector's walks, so that one system's heap does not slow another's collections
    gc.collect()
    gc.freeze()
    try:
        for _ in range(samples):
            gc.collect()  # the last run's garbage is not this run's work
            started, cpu_started = time.perf_counter(), time.process_time()
            await run()
            times.append(time.perf_counter() - started)
            cpu.append(time.process_time() - cpu_started)
    finally:
        gc.unfreeze()
    return statistics.median(times) / nodes * 1e6, statistics.median(cpu) / nodes * 1e6


async def measure(
    systems: Sequence[str], sizes: Sequence[int], budget: int = NODES_PER_SAMPLE
) -> list[dict[str, Any]]:
    rows = []
    for shape in SHAPES:
        for nodes in sizes:
            row: dict[str, Any] = {"shape": shape, "nodes": nodes}
            for system in systems:
                started = time.perf_counter()
                run = SYSTEMS[system](nodes, shape)
                row[f"{system}_setup_s"] = round(time.perf_counter() - started, 3)
                wall, cpu = await per_node_us(run, nodes, budget)
                row[f"{system}_us"], row[f"{system}_cpu_us"] = round(wall, 2), round(cpu, 2)
                if isinstance(run, RunnerRound):
                    row["runner_text_mb"] = round(run.text_chars / 1e6, 1)
            print(row, flush=True)
            rows.append(row)
    return rows


PROFILED = (1_000, "wide")
PROFILE_TOP = 12


def profile_round(nodes: int, shape: str, top: int = PROFILE_TOP) -> dict[str, Any]:
    """Where a runner round's time goes: cProfile of one round (after a warm-up), the functions
    with the most time of their own, each as a share of the round and in calls per node."""
    run = runner_round(nodes, shape)
    asyncio.run(run())
    profiler = cProfile.Profile()
    profiler.enable()
    asyncio.run(run())
    profiler.disable()
    stats = pstats.Stats(profiler)
    entries = stats.stats  # type: ignore[attr-defined]  # pstats keeps it untyped
    total = sum(entry[2] for entry in entries.values())
    ranked = sorted(entries.items(), key=lambda item: -item[1][2])[:top]
    return {
        "nodes": nodes,
        "shape": shape,
        "calls_per_node": round(sum(entry[1] for entry in entries.values()) / nodes),
        "top": [
            {
                "function": f"{Path(file).name}:{line} {name}",
                "share": round(own / total, 3),
                "calls_per_node": round(calls / nodes, 1),
            }
            for (file, line, name), (_, calls, own, _, _) in ranked
        ],
    }


def linearity(rows: Sequence[dict[str, Any]], system: str, measure: str = "us") -> dict[str, float]:
    """Per shape: µs per node at the largest size over µs per node at 1,000 nodes (1.0 is
    perfectly linear; small trees pay the round's fixed costs, so they are left out), of wall
    time (`measure` "us") or CPU time ("cpu_us")."""
    ratios = {}
    for shape in SHAPES:
        by_size = {
            row["nodes"]: row[f"{system}_{measure}"] for row in rows if row["shape"] == shape
        }
        largest = max(by_size)
        if 1_000 in by_size and largest > 1_000:
            ratios[shape] = round(by_size[largest] / by_size[1_000], 2)
    return ratios


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.overhead")
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    parser.add_argument("--no-langgraph", action="store_true")
    args = parser.parse_args(argv or [])
    sizes = [int(size) for size in args.sizes.split(",")]
    systems = [name for name in SYSTEMS if not (args.no_langgraph and name == "langgraph")]
    from bench.retrieval import machine

    host = machine()
    rows = asyncio.run(measure(systems, sizes))
    command = "python -m bench.overhead" + "".join(f" {arg}" for arg in (argv or []))
    results = {
        "date": date.today().isoformat(),
        "command": command,
        "machine": host,
        "systems": systems,
        "rows": rows,
        "linearity": linearity(rows, "runner"),
        "linearity_cpu": linearity(rows, "runner", "cpu_us"),
        "profile": profile_round(*PROFILED),
        "target_us_per_node": TARGET_US_PER_NODE,
        "sampling": SAMPLING,
    }
    # stamped before anything is written: the results file is tracked, and once written the
    # checkout would count as changed
    results["stamp"] = stamp()
    write_results("overhead", results)
    write_section(TITLE, section(results), stamped=results)
    print(section(results))


if __name__ == "__main__":
    main(sys.argv[1:])
