"""The serving benchmark's section of bench/README.md: the table of every setup, what the
figures mean and what limits them, and the before/after table of a paired run."""

from __future__ import annotations

from typing import Any

TABLE_HEAD = (
    "| setup | arrivals | rounds/s | round ms p50 / p99 | LLM ms p50 "
    "| overhead ms p50 / p99 | CPU ms a round: workers / client | lost / duplicated |\n"
    "|---|---|---|---|---|---|---|---|"
)


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


def wakes_paragraph(wakes: dict[str, float]) -> str:
    """Why a paced round costs more CPU than all at once, or back to back: bench.serve_wakes's
    figures of the same run."""
    return (
        "Why a round costs more CPU paced than all at once (and than `python -m "
        "bench.serve_cpu`'s rounds one after another at zero LLM latency, which do the same "
        "work: about half of it): a round is many short pieces of work, each begun by a wake — "
        "of the event loop (an LLM reply, a store call's result) or of a worker thread (a hop "
        "off the loop) — and paced, nearly every piece follows an idle gap. Measured in the "
        f"same run on this machine: a wake of the loop from a 20 ms sleep costs "
        f"{wakes['sleep_wake_us']:g} µs of CPU; a hop to a thread and back "
        f"{wakes['hop_us']:g} µs on a busy loop and {wakes['hop_after_idle_us']:g} µs right "
        "after idling; a small piece of Python work right after idling "
        f"{wakes['work_after_idle_ratio']:g}× its CPU back to back (caches, or the virtual "
        "machine's processor, cold after idling: the figures say how much, not which). All at "
        "once, the rounds keep the workers busy and share their wakes. So a round makes as few "
        "hops as it can (docs/serve.md, Scaling out): one to the store's threads to lock and "
        "read its session, one to save it and let go of the lock, one per corpus search (its "
        "evidence in the same hop), one per task whose tools have rule patterns, and one for a "
        "prompt-type pattern (the root's rules matched in it)."
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
            "Each worker prepares its pipeline before it reports ready (its corpus's "
            "embedding model loaded and run once, the modules rounds use imported: "
            "docs/serve.md), and the simulated LLM makes each reply it has not made before "
            "once, off the worker's event loop, as a model server would: the first rounds of a "
            "worker are measured like the others.",
            "",
            "What limits the figures: the 2 CPUs are shared — by the workers, PostgreSQL, the "
            "load generator and, on this machine, other work (the load average above) — and a "
            "worker's round is a few milliseconds of CPU in one event loop, so a round waits "
            "for the CPU work of the rounds beside it. The CPU per round, not the latency, is "
            "the figure to size a deployment by (docs/serve.md, Scaling out).",
            *(["", back_to_back_paragraph(results)] if results.get("back_to_back") else []),
            *(["", wakes_paragraph(results["wakes"])] if results.get("wakes") else []),
            *(["", paired_section(results)] if results.get("paired") else []),
        ]
    )


def back_to_back_paragraph(results: dict[str, Any]) -> str:
    """The CPU a round's own work costs: bench.serve_cpu's rounds, one after another."""
    cpu = results["back_to_back"]
    return (
        f"What a round's own work costs, without the idle gaps: the same conversations on the "
        f"Service object, one round after another at zero LLM latency (`python -m bench."
        f"serve_cpu`, {cpu['conversations']} conversations a run, the median of its runs): "
        f"**{cpu['cpu_ms_per_round']} ms** of CPU a round (target ≤ "
        f"{results['targets']['cpu_ms_per_round']:g} ms) — the corpus searches "
        f"{cpu['searches_ms_per_round']} ms, the session store's calls "
        f"{cpu['store_ms_per_round']} ms, the rest (the engine, the prompts, the service) "
        f"{cpu['rest_ms_per_round']} ms."
    )
