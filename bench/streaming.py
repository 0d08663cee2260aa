"""Streamed answers and OpenTelemetry: how soon the answer starts to show, and what telemetry
costs a round, off and on.

    python -m bench.streaming [--rounds 30] [--latency 0.1] [--word 0.02] [--smollm2]

- Time to the first token: the support example on the simulated LLM (bench/simllm.py), every
  call taking `--latency` to its first word and `--word` for each word after it. A face
  watching the round (`runner.app.watching`, what `runner serve`'s streams and `runner run
  --stream` use) sees the answer's first word after the time to the first token; without
  streaming it sees the answer when the round ends. With `--smollm2` (make test-llm's model
  environment), the same on SmolLM2-135M through llama.cpp's server, on the minimal example.
- Telemetry off and on: the same round on the offline LLM (no latency: the figure is runner's
  own time), `--rounds` times each way, interleaved: no observer (OpenTelemetry off: the
  process never imports it), the OpenTelemetry observer with the SDK's tracer and meter
  (spans to an in-memory exporter, cleared between rounds), and the same observer with content
  capture (each LLM call's prompt and reply kept for the round and put on its chat span). What
  "off" adds to a round that nothing else measures, timed alone: one `is None` test per trace
  event, two tests of an empty list per round (an observer? one that wants content?) and one
  context-variable read per LLM call (does the call keep its prompt?).
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import sys
import tempfile
import time
import timeit
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import Any

from bench.readme import table, write_results, write_section
from bench.simllm import SimulatedLLM

TITLE = "Streaming and OpenTelemetry: time to the first token, and telemetry's cost"
SUPPORT = Path(__file__).resolve().parents[1] / "pipelines" / "support"
QUESTIONS = (
    "Is the KW-620 quiet? And what is the warranty?",
    "How do I descale the KD-450?",
    "What does error E4 mean on the dishwasher?",
)
# the first token before the round's end; telemetry off under 1% of a round (nothing measurable)
TARGETS = {"first_token_share_of_round": 1.0, "off_share_of_round": 0.01}


def stage(folder: Path) -> Path:
    """The support example in a folder of its own (its index built there on first use)."""
    shutil.copytree(SUPPORT, folder / "support", ignore=shutil.ignore_patterns(".runner"))
    return folder / "support" / "support.yaml"


# --- time to the first token --------------------------------------------------------------------


async def first_token(runtime: Any, store: Any, question: str) -> dict[str, Any]:
    """One round's outcome (its error, if any), seconds to the answer's first streamed piece
    (None when none came), seconds of the whole round and the pieces streamed."""
    from runner.app import RoundWatch

    pieces: list[float] = []
    watch = RoundWatch(on_delta=lambda _text: pieces.append(time.perf_counter()))
    started = time.perf_counter()
    result = await runtime.conversation(store).say(question, watch=watch)
    ended = time.perf_counter()
    return {
        "outcome": result.outcome,
        "error": result.error,
        "first_token_s": pieces[0] - started if pieces else None,
        "round_s": ended - started,
        "pieces": len(pieces),
    }


def answered(run: dict[str, Any], question: str) -> dict[str, Any]:
    """The run of a round that must end in a streamed answer (the simulated LLM's: nothing in
    it can fail), or an error saying how it ended instead."""
    if run["outcome"] != "answer" or not run["pieces"]:
        raise RuntimeError(f"no streamed answer for {question!r}: {run['outcome']} {run['error']}")
    return run


def time_to_first_token(
    pipeline: Path, folder: Path, latency_s: float, word_s: float, repeats: int
) -> dict[str, Any]:
    from runner.app import Runtime
    from runner.sessions import open_store

    sim = SimulatedLLM({}, latency_s, word_s=word_s)
    rows = []
    with (
        Runtime.open(pipeline, client=sim.runner_client()) as runtime,
        open_store(str(folder / "ttft.sqlite")) as store,
    ):
        runtime.prepare()
        for question in QUESTIONS:
            runs = [
                answered(asyncio.run(first_token(runtime, store, question)), question)
                for _ in range(repeats)
            ]
            first = statistics.median(run["first_token_s"] for run in runs)
            whole = statistics.median(run["round_s"] for run in runs)
            rows.append(
                {
                    "question": question,
                    "first_token_s": round(first, 3),
                    "round_s": round(whole, 3),
                    "pieces": runs[0]["pieces"],
                }
            )
    return {"latency_s": latency_s, "word_s": word_s, "repeats": repeats, "questions": rows}


def smollm2_first_token(folder: Path, questions: Sequence[str]) -> dict[str, Any]:
    """The same figures on SmolLM2-135M (llama.cpp's server on one thread, started here), on
    the minimal example: a retrieval, a prompt tool, the answer."""
    from bench import llama_server
    from runner.app import Runtime
    from runner.config import load_pipeline
    from runner.config.model import LLMConfig
    from runner.sessions import open_store

    why = llama_server.available()
    if why is not None:
        return {"skipped": why}
    examples = SUPPORT.parent
    shutil.copy(examples / "minimal.yaml", folder)
    shutil.copytree(examples / "minimal", folder / "minimal", ignore=shutil.ignore_patterns(".*"))
    rows = []
    with llama_server.running(folder / "llama-server.log") as server:
        llm = LLMConfig(
            provider="openai_like",
            model=llama_server.MODEL_ALIAS,
            api_base=server.url,
            timeout_s=600.0,
            max_tokens=256,
            concurrency=1,
            context_window=llama_server.CONTEXT_WINDOW,
        )
        pipeline = replace(load_pipeline(folder / "minimal.yaml"), llm=llm)
        with (
            Runtime.from_pipeline(pipeline) as runtime,
            open_store(str(folder / "smollm2.sqlite")) as store,
        ):
            for question in questions:
                # a 135M model's round may end otherwise (an unusable answer: an error naming
                # it); it is reported as it ended, and only answers count in the figures
                run = asyncio.run(first_token(runtime, store, question))
                first = run["first_token_s"] if run["outcome"] == "answer" else None
                rows.append(
                    {
                        "question": question,
                        "outcome": run["outcome"],
                        "error": run["error"],
                        "first_token_s": None if first is None else round(first, 3),
                        "round_s": round(run["round_s"], 3),
                        "pieces": run["pieces"],
                    }
                )
    return {"questions": rows}


SMOLLM2_QUESTIONS = ("How do I descale the kettle?", "How do I reset the boil-dry protection?")


# --- telemetry off and on -----------------------------------------------------------------------


def round_times(
    pipeline: Path,
    folder: Path,
    rounds: int,
    observers: dict[str, tuple[Callable[[Any], None], bool] | None],
) -> dict[str, list[float]]:
    """Milliseconds per round in each mode (its observer and whether it wants content; None:
    no observer), interleaved so that all see the same machine: each question once in each
    mode in a row, the order turning a step each question (a later run of a question finds
    warmer caches)."""
    from runner import observability
    from runner.app import Runtime
    from runner.sessions import open_store

    modes = list(observers)
    times: dict[str, list[float]] = {mode: [] for mode in modes}
    with (
        Runtime.open(pipeline, llm_override="offline") as runtime,
        open_store(str(folder / "otel.sqlite")) as store,
    ):
        runtime.prepare()
        for block in range(rounds + 1):  # the first: warming up
            question = QUESTIONS[block % len(QUESTIONS)]
            turn = block % len(modes)
            for mode in modes[turn:] + modes[:turn]:
                watching = observers[mode]
                if watching is not None:
                    observability.add_observer(watching[0], content=watching[1])
                started = time.perf_counter()
                asyncio.run(runtime.conversation(store).say(question))
                elapsed = (time.perf_counter() - started) * 1000
                if watching is not None:
                    observability.remove_observer(watching[0])
                if block:
                    times[mode].append(elapsed)
    return times


def otel_observer(content: bool = False) -> tuple[Callable[[Any], None], Callable[[], int]]:
    """The OpenTelemetry observer on the SDK (with content capture or not), and how many spans
    it has made (then cleared)."""
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from runner.observability.otel import OtelObserver

    exporter = InMemorySpanExporter()
    tracers = TracerProvider()
    tracers.add_span_processor(SimpleSpanProcessor(exporter))
    meters = MeterProvider(metric_readers=[InMemoryMetricReader()])
    observer = OtelObserver(tracers, meters, content=content)

    def observe(finished: Any) -> None:
        observer(finished)

    def spans() -> int:
        count = len(exporter.get_finished_spans())
        exporter.clear()
        return count

    return observe, spans


def off_checks(events_per_round: int, calls_per_round: int) -> dict[str, float]:
    """What telemetry off adds to a round, timed alone (nanoseconds): the trace's `listener is
    None` test per event, the application layer's `observed()` and `wants_content()` per round,
    and the LLM client's `exchange()` per call (nothing kept)."""
    from runner import observability
    from runner.llm.exchanges import exchange
    from runner.trace import Trace

    trace = Trace()

    def timed(check: Callable[[], object]) -> float:
        number = 1_000_000
        return min(timeit.repeat(check, number=number, repeat=5)) / number * 1e9

    event_ns = timed(lambda: trace.listener is not None)
    observed_ns = timed(observability.observed)
    content_ns = timed(observability.wants_content)
    call_ns = timed(lambda: exchange("prompt", "reply"))
    total_ns = event_ns * events_per_round + observed_ns + content_ns + call_ns * calls_per_round
    return {
        "listener_test_ns": round(event_ns, 1),
        "observed_test_ns": round(observed_ns, 1),
        "wants_content_test_ns": round(content_ns, 1),
        "exchange_test_ns": round(call_ns, 1),
        "events_per_round": events_per_round,
        "calls_per_round": calls_per_round,
        "per_round_us": round(total_ns / 1000, 3),
    }


def telemetry_cost(pipeline: Path, folder: Path, rounds: int) -> dict[str, Any]:
    imported_before = "opentelemetry" in sys.modules
    events, calls = _events_per_round(pipeline, folder)
    imported_off = "opentelemetry" in sys.modules
    observe, spans = otel_observer()
    observe_content, spans_content = otel_observer(content=True)
    seen: list[int] = []

    def counting(finished: Any) -> None:
        observe(finished)
        seen.append(spans())

    def emptying(finished: Any) -> None:
        observe_content(finished)
        spans_content()

    modes: dict[str, tuple[Callable[[Any], None], bool] | None] = {
        "off": None,
        "on": (counting, False),
        "content": (emptying, True),
    }
    times = round_times(pipeline, folder, rounds, modes)
    off, on = statistics.median(times["off"]), statistics.median(times["on"])
    content = statistics.median(times["content"])
    return {
        "rounds": rounds,
        # (unknown when something imported it before the benchmark began)
        "opentelemetry_imported_when_off": None if imported_before else imported_off,
        "off_ms": round(off, 2),
        "on_ms": round(on, 2),
        "on_over_off": round(on / off, 3),
        "content_ms": round(content, 2),
        "content_over_off": round(content / off, 3),
        "spans_per_round": statistics.median(seen) if seen else 0,
        "off_checks": off_checks(events, calls),
    }


def _events_per_round(pipeline: Path, folder: Path) -> tuple[int, int]:
    """The trace events of one round of the first question (each passes the listener test),
    and its LLM calls (each asks whether to keep its prompt)."""
    from runner.app import Runtime
    from runner.sessions import open_store

    with (
        Runtime.open(pipeline, llm_override="offline") as runtime,
        open_store(str(folder / "probe.sqlite")) as store,
    ):
        result = asyncio.run(runtime.conversation(store).say(QUESTIONS[0]))
        events = result.trace.events if result.trace is not None else []
        return len(events), sum(event["event"] == "llm.call" for event in events)


# --- the report ---------------------------------------------------------------------------------


def section(results: dict[str, Any]) -> str:
    ttft, cost = results["first_token"], results["telemetry"]
    rows = [
        [
            row["question"],
            f"{row['first_token_s']:.2f} s",
            f"{row['round_s']:.2f} s",
            f"{row['first_token_s'] / row['round_s']:.0%}",
            str(row["pieces"]),
        ]
        for row in ttft["questions"]
    ]
    checks = cost["off_checks"]
    machine = ", ".join(f"{key} {value}" for key, value in results["machine"].items())
    smollm2 = results.get("smollm2") or {"skipped": "not asked for (`--smollm2`)"}
    if "skipped" in smollm2:
        on_model = f"On SmolLM2-135M: skipped ({smollm2['skipped']})."
    else:
        model_rows = [
            [
                row["question"],
                row["outcome"],
                "—" if row["first_token_s"] is None else f"{row['first_token_s']:.2f} s",
                f"{row['round_s']:.2f} s",
                "—"
                if row["first_token_s"] is None
                else f"{row['first_token_s'] / row['round_s']:.0%}",
                str(row["pieces"]),
            ]
            for row in smollm2["questions"]
        ]
        failed = "".join(
            f"\n\n{row['question']!r} ended in {row['outcome']}: {row['error']}"
            for row in smollm2["questions"]
            if row["outcome"] != "answer"
        )
        on_model = (
            "On SmolLM2-135M (llama.cpp's server, one CPU thread; the minimal example: a "
            "retrieval, a prompt tool, the answer; one round each; a round that does not end "
            "in an answer is shown with its outcome and left out of the summary):\n\n"
            + table(
                ["question", "outcome", "first token", "whole round", "share", "pieces"],
                model_rows,
            )
            + failed
        )
    return f"""`{results["command"]}` ({results["date"]}; {machine}). Raw figures:
`bench/results/streaming.json`.

Time to the first token, on the simulated LLM ({ttft["latency_s"]} s to a call's first word,
{ttft["word_s"]} s a word after it; median of {ttft["repeats"]} rounds): a face watching the
round shows the answer's first word after the first column; without streaming, after the
second.

{table(["question", "first token", "whole round", "share", "pieces"], rows)}

{on_model}

Telemetry, the same rounds on the offline LLM (runner's own time), median of {cost["rounds"]}
rounds each way, interleaved: off {cost["off_ms"]} ms a round; on (OpenTelemetry's SDK, spans to
memory, {cost["spans_per_round"]} spans a round) {cost["on_ms"]} ms, {cost["on_over_off"]}× off;
with content capture (each LLM call's prompt and reply on its chat span) {cost["content_ms"]} ms,
{cost["content_over_off"]}× off.
Off, OpenTelemetry is never imported (imported: {cost["opentelemetry_imported_when_off"]}), and
a round pays {checks["events_per_round"]} `listener is None` tests ({checks["listener_test_ns"]}
ns each), one `observed()` ({checks["observed_test_ns"]} ns), one `wants_content()`
({checks["wants_content_test_ns"]} ns) and {checks["calls_per_round"]} `exchange()` reads, one a
call ({checks["exchange_test_ns"]} ns each): {checks["per_round_us"]} µs,
{checks["per_round_us"] / 1000 / cost["off_ms"]:.4%} of the round — nothing measurable.
"""


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.streaming")
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--latency", type=float, default=0.1)
    parser.add_argument("--word", type=float, default=0.02)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--smollm2", action="store_true", help="also on SmolLM2-135M (make test-llm's env)"
    )
    args = parser.parse_args(argv or [])
    from bench.retrieval import machine

    host = machine()
    with tempfile.TemporaryDirectory(prefix="runner-bench-") as folder:
        pipeline = stage(Path(folder))
        cost = telemetry_cost(pipeline, Path(folder), args.rounds)
        ttft = time_to_first_token(pipeline, Path(folder), args.latency, args.word, args.repeats)
        smollm2 = smollm2_first_token(Path(folder), SMOLLM2_QUESTIONS) if args.smollm2 else None
    results = {
        "date": date.today().isoformat(),
        "command": "python -m bench.streaming" + "".join(f" {arg}" for arg in (argv or [])),
        "machine": host,
        "first_token": ttft,
        "telemetry": cost,
        "smollm2": smollm2,
        "targets": TARGETS,
    }
    write_results("streaming", results)
    write_section(TITLE, section(results))
    print(section(results))


if __name__ == "__main__":
    main(sys.argv[1:])
