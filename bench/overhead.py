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
from typing import Annotated, Any, TypedDict

from bench.readme import stamp, table, write_results, write_section
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
from runner.engine.orchestrator import TRAMPOLINE_LEVELS
from runner.engine.protocols import ToolEnv
from runner.engine.results import ToolResult
from runner.engine.task import Task

TITLE = "Engine overhead: runner, LangGraph and asyncio"
SIZES = (10, 100, 1_000, 10_000)
SHAPES = ("wide", "deep")
TARGET_US_PER_NODE = 30.0
NODES_PER_SAMPLE = 20_000  # small trees are run repeatedly, so every sample is about this big
MIN_SAMPLES = 3
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
        self.text_chars = sum(len(task.prompt_context or "") for task in tasks)
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
    config = {"recursion_limit": nodes + 10}

    async def run() -> None:
        await compiled.ainvoke({"done": []}, config=config)

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


# --- the report ---------------------------------------------------------------------------------


def section(results: dict[str, Any]) -> str:
    systems = results["systems"]
    header = [
        "shape",
        "nodes",
        *(f"{name} µs/node" for name in systems),
        "runner CPU µs/node",
        "runner text held",
    ]
    rows = [
        [
            row["shape"],
            f"{row['nodes']:,}",
            *(row[f"{name}_us"] for name in systems),
            row.get("runner_cpu_us", ""),
            f"{row['runner_text_mb']} MB" if "runner_text_mb" in row else "",
        ]
        for row in results["rows"]
    ]
    # trees under 100 nodes are mostly the round's fixed costs (the answer call, the result)
    sized = [row for row in results["rows"] if row["nodes"] >= 100] or results["rows"]
    worst = max(row["runner_us"] for row in sized)
    wide = [row for row in sized if row["shape"] == "wide"] or sized
    worst_wide = max(row["runner_us"] for row in wide)
    linear = _ratios(results["linearity"])
    linear_cpu = _ratios(results.get("linearity_cpu", {}))
    machine = ", ".join(f"{key} {value}" for key, value in results["machine"].items())
    return f"""`{results["command"]}` ({results["date"]}; {machine}). The median of runs of about
{NODES_PER_SAMPLE:,} nodes each (at least {MIN_SAMPLES}), after a warm-up run, with the garbage
of the last run collected first and what the process had before frozen out of the collector's
walks (`gc.freeze()`, as a long-running service does: the libraries of one system must not slow
another's collections); µs of wall time per task node, and for runner also µs of the process's
CPU time, which the other work of a shared machine slows less (on an idle machine the two are
about equal). runner: one round (`Orchestrator.run_round`, no session store) over a tree that one
Python coordinator makes, every subtask forced onto a no-op tool, the simulated LLM at zero
latency; "runner, GC paused" is the same with Python's cyclic garbage collector paused during the
round (a diagnosis, not a way to run runner); "runner text held" is the execution text the tree's
subtasks carry (C20a). LangGraph: `ainvoke` of the compiled graph (a fan-out of `Send`s, or a chain
of edges), async no-op nodes, compiled outside the timing. asyncio: `gather` of no-op coroutines
(wide) or awaiting them one by one (deep). Raw figures: `bench/results/overhead.json`.

{table(header, rows)}

Target: at most {TARGET_US_PER_NODE:.0f} µs per task node, and at most 1.5× from 1,000 to 10,000
nodes. runner's worst figure from 100 nodes up: {worst_wide} µs wide, {worst} µs in all; µs per
node at the largest tree over µs per node at 1,000 nodes: {linear} of wall time, {linear_cpu} of
CPU time (1.0 is linear).{_against_langgraph(sized)} {_verdict(worst)}

**Fixed by this issue** (each found with cProfile, each measured against the code before it in
one run, A B A B): a tool's buffer snapshot copied the whole buffer (now a view made in O(1));
the result's task tree looked every node's results up in a fresh copy of the buffer; tree walks
were recursive generators (O(depth) per node) and the orchestrator recursed once per level, so a
chain of 1,000 levels ended in a RecursionError (walks are iterative now, and a subtree deeper
than {TRAMPOLINE_LEVELS} levels goes on in a task of its own); trace fields were checked and
converted one by one (the orchestrator's own events are JSON already); the forced-tools plan was
worked out per subtask (now once per set of names); coroutines were made where nothing was
awaited. Before, 1,000 wide nodes cost about 930 µs each and a chain of 1,000 did not finish.
Then, from 43–64 µs a wide node: the orchestrator's five trace events a node are kept as a clock
reading and the fields handed over, in flat lists, and made into dicts when `events` is first
read (`Trace.record_json`); the sorted names of a task's required tools are worked out once per
set of names and handed over as shared tuples; a tool result no longer goes through
`inspect.isawaitable` and the output check when it is a plain `ToolResult`.

On 2026-12-03 (load 5–14 on the two cores, so in CPU time): **the collector's full collections
are deferred while a round runs** (`runner/engine/collector.py`). What a round makes outlives it
— the task tree, the buffer, the trace — so young collections free almost nothing of it and
promote it all, and each full collection (by default after ten of the middle generation, about
every 70,000 surviving objects) walked the whole heap the round had built so far: 3 full
collections in a 10,000-node wide round, each longer than the last, and the cost per node grew
with the tree. While any round runs, full collections are ten times rarer (more deferred no
further cost); young and middle collections go on as before, so a tool's short-lived garbage is
freed as soon as it was, and the thresholds are put back when the last round in flight ends:
wide 10k from 40.5/33.9 to 27.6/28.1 µs CPU a node (0.69–0.83×), the CPU linearity from
1.56/1.44× to 1.04/1.15×. A forced activation leaves the collector less to walk per task: its
`activated` list is one tuple per set of tools, shared by the events (the trace makes each
event's list of copies when read), its planned tools a tuple (28.7 → 26.9 objects a wide node
leaves; wide 10k 0.91×). A task's execution text is made once (`Task.execution_text`) and shared
by its tool call, its buffer entry and its subtasks' `prompt_context`: a chain made and held each
level's text twice (deep 10k 0.86×, 1k 0.78× of CPU; 4,074 → 2,084 MB held at 10k).

**What is left is interpreter work, spread thin.** Every task node is a task object, five trace
events (recorded, not yet made into dicts), a coordinator step that skips, a forced activation,
one tool call through the protocol (its environment, its result, its buffer entry) and a node of
the result's task tree: about {results["profile"]["calls_per_node"]} Python function calls. The
profile of a round of {results["profile"]["nodes"]:,} {results["profile"]["shape"]} nodes has no
hotspot (the functions with the most time of their own; the garbage collector's time is counted
in the function that allocated when it ran):

{_profile_table(results["profile"])}

`round.py` closes a task (`process`, `start_task`, `finish_task`), `coordinators.py` has the
coordinator step and `adopt` (the orchestrator's fields on the subtasks a coordinator made),
`subtasks.py` the subtask walk, `activation.py` and `execution.py` the forced activation and the
tool call, `channels.py` and `context.py` carry each event to `runner/trace` (`record_json`),
`outcome.py` builds the result's task tree. What is left to drop per node is what the round must
produce — the trace events, the buffer entries and the task tree of the result, which `runner
explain` and the tests read, and the task objects the coordinator makes. Runs on this shared
machine vary by a third from one run to the next, so compare figures of the same run.

**Wide trees, from 1,000 to 10,000 nodes**: {_growth(results["rows"], "wide")} Each young
collection walks only what was made since the last; without `gc.freeze()` a full collection would
also walk everything the process had imported (LangGraph brings langchain-core), and 10,000 wide
nodes then cost runner 100 to 130 µs each.

**A deep chain cannot be linear under C20a and C21.** Each subtask carries its parent's execution
text as its `prompt_context`, and a tool is handed prompt_context + marker + task prompt as one
string (C21): in a chain, the text of level d holds all d prompts above it, so the tree holds text
quadratic in its depth ("runner text held"), and making each level's string costs time linear in
d. Holding the parent's text by reference (a rope of the prompts above, joined when a tool is
called, no text in the buffer entry) was measured on 2026-12-03 (load 8): memory held at 10,000
levels falls from 2,080 to 78 MB, but the time per node rises from 113–137 to 395–420 µs of CPU,
because each call still makes a string of d prompts, now from d pieces instead of from the
parent's ready string. Only a tool handed something other than a `str` (a lazy text joined when
read) would make a chain linear, and that is another tool protocol. So runner keeps one string a
level, made once; linear in nodes is the target for wide and bushy trees (a real decomposition is
a few levels deep: `limits.max_depth` defaults to 4). With the text made in O(1) (a diagnosis),
the engine's own cost of a chain was 24.6 µs a node at 1,000 levels and 33.4 µs at 10,000 (CPU,
load 6.2). LangGraph's chain carries no such context and grows too.
"""


def _ratios(ratios: dict[str, float]) -> str:
    return ", ".join(f"{shape} {ratio}×" for shape, ratio in ratios.items()) or "not measured"


def _growth(rows: Sequence[dict[str, Any]], shape: str) -> str:
    """How much the cost per node grows from 1,000 nodes to the largest tree, with and without
    the garbage collector."""
    by_size = {row["nodes"]: row for row in rows if row["shape"] == shape}
    largest = max(by_size)
    if 1_000 not in by_size or largest <= 1_000:
        return "not measured."
    small, big = by_size[1_000], by_size[largest]
    text = f"runner's cost per node grows {big['runner_us'] / small['runner_us']:.2f}×"
    if "runner_cpu_us" in small and "runner_cpu_us" in big:
        text += f" ({big['runner_cpu_us'] / small['runner_cpu_us']:.2f}× of CPU time)"
    paused = "runner, GC paused_us"
    if paused in small and paused in big:
        text += f", {big[paused] / small[paused]:.2f}× with the garbage collector paused"
    return text + "."


def _verdict(worst: float) -> str:
    if worst <= TARGET_US_PER_NODE:
        return "The target is met; here is what the figures are made of."
    return "The target is missed where the figures say so; here is what limits them."


def _against_langgraph(rows: Sequence[dict[str, Any]]) -> str:
    shares = [row["runner_us"] / row["langgraph_us"] for row in rows if "langgraph_us" in row]
    if not shares:
        return ""
    return (
        f" runner costs {min(shares):.0%} to {max(shares):.0%} of what LangGraph costs for the "
        "same graph."
    )


def _profile_table(profile: dict[str, Any]) -> str:
    rows = [
        [f"`{entry['function']}`", f"{entry['share']:.1%}", entry["calls_per_node"]]
        for entry in profile["top"]
    ]
    return table(["function", "share of the round", "calls per node"], rows)


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
    }
    # stamped before anything is written: the results file is tracked, and once written the
    # checkout would count as changed
    results["stamp"] = stamp()
    write_results("overhead", results)
    write_section(TITLE, section(results), stamped=results)
    print(section(results))


if __name__ == "__main__":
    main(sys.argv[1:])
