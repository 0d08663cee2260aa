"""The text of bench.overhead's README section: its tables, the target's verdict, and what
limits the figures (each figure read from the results it is given)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bench.readme import table
from runner.engine.subtasks import TRAMPOLINE_LEVELS


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
    target = results["target_us_per_node"]
    sample, least = results["sampling"]["nodes"], results["sampling"]["min_samples"]
    return f"""`{results["command"]}` ({results["date"]}; {machine}). The median of runs of about
{sample:,} nodes each (at least {least}), after a warm-up run, with the garbage
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

Target: at most {target:.0f} µs per task node, and at most 1.5× from 1,000 to 10,000
nodes. runner's worst figure from 100 nodes up: {worst_wide} µs wide, {worst} µs in all; µs per
node at the largest tree over µs per node at 1,000 nodes: {linear} of wall time, {linear_cpu} of
CPU time (1.0 is linear).{_against_langgraph(sized)} {_verdict(worst, target)}

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
On 2026-12-06 (A B A B, load 1.6–1.8, µs of CPU a node): a tool call's LLM client and prompts
are bound to its task when the tool first reads them (most calls never do), the final answer's
passages are made in one walk of the buffer instead of two, and the round's channel, the
coordinator step, `adopt` and the forced activation each do their per-node part without the
copies and lookups they repeated (178 → 161 Python calls a deep node): wide 10k 28.6 → 25.0,
deep 1k 32.8 → 26.6, deep 10k 44.6 → 41.0.

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

**Deep chains: each level's execution text held as a link, not as a string.** Each subtask
carries its parent's execution text as its `prompt_context` (C20a), and a tool is handed
prompt_context + marker + task prompt (C21): in a chain, level d's text holds all d prompts
above it ("runner text held" is that text, quadratic in the depth). Held as one string a level,
as until 2026-12-03, a chain of 10,000 levels kept 2,089 MB of strings and cost 94 µs of CPU a
node against 22.5 at 1,000 levels (load 2.8); the same strings made and dropped at once cost
33: the time was the memory. Now, below a text of 4,096 characters, the engine holds each
level's text as a link (`runner/engine/text.py`: the text above and one prompt, made in O(1)),
shared by the task's buffer entry and its subtasks' `prompt_context`, which read as the string
when they are read; the string a tool is handed is a slice of one string that the links of the
chain share (the deepest level, run first (C5), joins it once; a walk from the top grows that
one string). A shorter text is copied, as before: a wide tree's texts stay plain strings, and
a task or result that holds a link is a class of its own (`LinkedTask`,
`LinkedPromptAndContext`), so that plain ones keep plain attributes. Paired A B A B (load 2.0,
µs of CPU a node, before → after): deep 10,000 95 → 28.9, deep 1,000 20.6 → 23.3 (10,000 over
1,000: 1.24×), wide 1,000 18.0 → 19.3, wide 10,000 20.3 → 22.2; a 10,000-level chain's peak
memory 2,071 → 80 MB. What still grows with the depth is the copy each tool call gets: C21
hands a tool a `str`, and a string of d prompts cannot be had without copying them (the
engine's own cost of a level, measured with the text made in O(1), was 18.4 µs at 1,000
levels and 21.7 at 10,000). The rope tried before (each level's string joined from its d
pieces at every call) was slower than the strings; this one joins once. LangGraph's chain
carries no such context and grows too. What keeps a chain of 10,000 levels above 30 µs a
node (2026-12-06, each stage timed and swapped out in turn): that copy, 6–8 µs a node at
10,000 levels (about 200 KB a level on average, bound by the memory's bandwidth), and the
young collections of the ~30 objects a node leaves, 3–4 µs a node at 10,000 levels against
about 2 at 1,000; the rest is the per-node work above, about 26 µs at 1,000 levels. Meeting
30 µs at that depth takes handing a tool its text only when it reads it, which C21's tool
contract (`execute(text: str, env)`) does not allow.
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


def _verdict(worst: float, target: float) -> str:
    if worst <= target:
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
