"""`runner eval` on the project's question sets (bench/questions/): quality, speed, overhead and
memory.

    python -m bench.eval        # writes bench/results/eval.json and its bench/README.md section

- quality: every set (`pydocs-users`, `pydocs-faq-headings`, `pgdocs-users` when the PostgreSQL
  manual can be fetched) evaluated through `runner eval`'s own code on a pipeline over the whole
  corpus (a `retrieve` tool, top 5; the offline provider; the deep fallback), as a user would run
  it: hit@1, hit@k, MRR, gold among the answer's sources;
- speed: questions per second on the first `SPEED_QUESTIONS` users' questions with `--jobs`
  1, 2 and 4, with bench.simllm's simulated LLM at 0 and 0.1 s a call (the time to open the
  pipeline left out); and on a local Ray cluster (two CPUs) beside it, with the offline provider
  (the simulated LLM lives in this process and does not travel to Ray's workers);
- overhead: the eval's own time per question over the same rounds run in a plain loop of
  `Conversation.say` (what `runner run` does), simulated LLM at 0 s;
- memory: the peak resident memory of a process evaluating `MEMORY_QUESTIONS` questions (the
  users' questions repeated) with the default options (traces and report included).
"""

from __future__ import annotations

import asyncio
import csv
import json
import logging
import resource
import subprocess
import sys
import tempfile
import time
from datetime import date
from pathlib import Path
from typing import Any

from bench.deep_pipeline import deep_fallback_pipeline
from bench.readme import read_results, table, write_results, write_section
from bench.retrieval import PYDOCS, machine

QUESTIONS = Path(__file__).resolve().parent / "questions"
SETS = ("pydocs-users", "pydocs-faq-headings", "pgdocs-users")
SPEED_QUESTIONS = 100
JOBS = (1, 2, 4)
LATENCIES = (0.0, 0.1)
MEMORY_QUESTIONS = 10_000
OVERHEAD_REPEATS = 5
PHASES = ("sets", "speed", "overhead", "memory")
TITLE = "runner eval: question sets, speed and memory"


def pipeline(folder: Path, domain: str, corpus: Path, include: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "docs").symlink_to(corpus)  # corpus paths stay inside the pipeline's folder
    path = folder / f"{domain}.yaml"
    text = deep_fallback_pipeline(domain=domain, corpus="docs", include=include)
    path.write_text(text, encoding="utf-8")
    return path


def pgdocs_corpus() -> Path | None:
    from bench.index_open import PGDOCS_SCRIPT

    download = Path(tempfile.gettempdir()) / "runner-bench-pgdocs"
    done = subprocess.run(
        ["bash", str(PGDOCS_SCRIPT), str(download)], capture_output=True, text=True, check=False
    )
    html = download / "html"
    return html if done.returncode == 0 and html.is_dir() else None


def evaluate(pipeline_path: Path, questions: Path, out: Path, **options: Any) -> Any:
    from runner.eval.evaluate import EvalOptions
    from runner.eval.evaluate import evaluate as run
    from runner.eval.setup import EvalSpec

    settings = {"progress": False, **options}
    return run(EvalSpec(pipeline_path), questions, EvalOptions(out=out, **settings))


def subset(source: Path, target: Path, count: int) -> Path:
    """The first `count` questions of a set, or the set repeated up to `count` (ids made
    unique)."""
    with source.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    with target.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        for index in range(count):
            row = dict(rows[index % len(rows)])
            if index >= len(rows):
                row["id"] = f"{row['id']}-{index // len(rows)}"
            writer.writerow(row)
    return target


def quality(base: Path, pydocs: Path) -> dict[str, Any]:
    found: dict[str, Any] = {}
    corpora = {"pydocs": pydocs}
    pg_html = pgdocs_corpus()
    if pg_html is not None:
        corpora["pgdocs"] = pipeline(base / "pgdocs", "pgdocs", pg_html, "**/*.html")
    for name in SETS:
        corpus = name.split("-")[0]
        if corpus not in corpora:
            found[name] = {"skipped": "the PostgreSQL manual could not be fetched"}
            continue
        started = time.perf_counter()
        outcome = evaluate(corpora[corpus], QUESTIONS / f"{name}.csv", base / "runs" / name, jobs=2)
        metrics = outcome.summary["metrics"]
        found[name] = {
            key: metrics[key]
            for key in (
                "questions",
                "hit@1",
                "hit@k",
                "mrr",
                "sourced",
                "groundedness",
                "llm_calls",
                "latency_p50_ms",
            )
        } | {"seconds": round(time.perf_counter() - started, 1)}
        print(name, found[name], flush=True)
    return found


def speed(base: Path, pydocs: Path) -> dict[str, Any]:
    from bench.simllm import SimulatedLLM

    questions = subset(QUESTIONS / "pydocs-users.csv", base / "speed.csv", SPEED_QUESTIONS)
    rates: dict[str, Any] = {}
    for latency in LATENCIES:
        for jobs in JOBS:
            client = SimulatedLLM({}, latency_s=latency).runner_client()
            outcome = evaluate(
                pydocs,
                questions,
                base / "runs" / f"speed-{latency}-{jobs}",
                jobs=jobs,
                client=client,
                report=False,
            )
            timing = outcome.summary["timing"]  # opening the pipeline left out
            rates["opening_s"] = round(timing["open_s"], 2)
            rates[f"latency {latency:g} s, jobs {jobs}"] = round(timing["questions_per_s"], 2)
            print(latency, jobs, rates, flush=True)
    rates["ray"] = ray_speed(base, pydocs, questions)
    return rates


def ray_speed(base: Path, pydocs: Path, questions: Path) -> dict[str, Any]:
    try:
        import ray
    except ImportError:
        return {"skipped": "ray is not installed (pip install 'runner[ray]')"}
    started = time.perf_counter()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level=logging.ERROR)
    start_s = time.perf_counter() - started
    try:
        found = {"cluster_start_s": round(start_s, 1)}
        for jobs in (1, 4):
            started = time.perf_counter()
            evaluate(
                pydocs,
                questions,
                base / "runs" / f"ray-{jobs}",
                ray="auto",
                jobs=jobs,
                batch=10,
                report=False,
            )
            seconds = time.perf_counter() - started
            found[f"jobs {jobs}: seconds"] = round(seconds, 1)
            found[f"jobs {jobs}: questions/s"] = round(SPEED_QUESTIONS / seconds, 2)
        return found
    finally:
        ray.shutdown()


def overhead(base: Path, pydocs: Path) -> dict[str, Any]:
    """The eval's time per question beyond the rounds themselves: the plain loop and the two
    evaluations run in turn `OVERHEAD_REPEATS` times, medians compared (a shared machine's
    noise is larger than the difference)."""
    import statistics

    from bench.simllm import SimulatedLLM

    questions = subset(QUESTIONS / "pydocs-users.csv", base / "overhead.csv", SPEED_QUESTIONS)
    variants = {
        "defaults": {},
        "no report": {"report": False},
        "no traces, no report": {"traces": False, "report": False},
    }
    times: dict[str, list[float]] = {"plain": [], **{label: [] for label in variants}}
    for repeat in range(OVERHEAD_REPEATS):
        client = SimulatedLLM({}, latency_s=0).runner_client()
        times["plain"].append(plain_rounds(pydocs, questions, client))
        for label, options in variants.items():
            client = SimulatedLLM({}, latency_s=0).runner_client()
            started = time.perf_counter()
            out = base / "runs" / f"overhead-{repeat}-{len(times[label])}-{label[:2]}"
            outcome = evaluate(pydocs, questions, out, client=client, **options)
            # all but opening the pipeline: asking, scoring, writing records and traces, the report
            times[label].append(time.perf_counter() - started - outcome.summary["timing"]["open_s"])
    plain = statistics.median(times["plain"])
    found: dict[str, Any] = {
        "repeats": OVERHEAD_REPEATS,
        "plain_ms_per_question": round(plain * 1000 / SPEED_QUESTIONS, 2),
    }
    for label in variants:
        extra = statistics.median(times[label]) - plain
        found[f"{label}: ms per question over plain"] = round(extra * 1000 / SPEED_QUESTIONS, 2)
    # the report is drawn once a run, whatever its size
    report = statistics.median(times["defaults"]) - statistics.median(times["no report"])
    found["report_s"] = round(report, 2)
    return found


def plain_rounds(pipeline_path: Path, questions: Path, client: Any) -> float:
    """The same rounds in a loop, as `runner run` runs each: seconds for all of them."""
    from runner.app import Runtime
    from runner.eval.questions import load_questions
    from runner.sessions import SessionStore

    texts = [q.question for q in load_questions(questions).questions]
    with (
        Runtime.open(pipeline_path, client=client) as runtime,
        tempfile.TemporaryDirectory() as folder,
        SessionStore(Path(folder) / "s.sqlite") as store,
    ):
        runtime.prepare()

        async def loop() -> float:
            started = time.perf_counter()
            for text in texts:
                await runtime.conversation(store).say(text)
            return time.perf_counter() - started

        return asyncio.run(loop())


def memory(base: Path, pydocs: Path) -> dict[str, Any]:
    questions = subset(QUESTIONS / "pydocs-users.csv", base / "memory.csv", MEMORY_QUESTIONS)
    command = [
        sys.executable,
        "-m",
        "bench.eval",
        "--memory",
        str(pydocs),
        str(questions),
        str(base / "runs" / "memory"),
    ]
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    found = json.loads(done.stdout.strip().splitlines()[-1])
    return found | {"questions": MEMORY_QUESTIONS, "seconds": round(time.perf_counter() - started)}


def memory_child(pipeline_path: str, questions: str, out: str) -> None:
    evaluate(Path(pipeline_path), Path(questions), Path(out), jobs=2)
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"peak_mb": round(peak_kb / 1024, 1)}))


def main(only: str | None = None) -> None:
    """Every phase, or (`--only PHASE`) one phase measured again, the others kept from
    bench/results/eval.json."""
    if not PYDOCS.is_dir():
        print(f"skipped: the pydocs corpus is not at {PYDOCS}")
        return
    previous = read_results("eval") if only else None
    if only and (previous is None or only not in PHASES):
        sys.exit(f"--only {only}: name one of {', '.join(PHASES)} after a full run")
    results = dict(previous or {})
    with tempfile.TemporaryDirectory(prefix="runner-bench-eval-") as folder:
        base = Path(folder)
        pydocs = pipeline(base / "pydocs", "pydocs", PYDOCS, "**/*.rst.txt")
        phases = {
            "speed": lambda: speed(base, pydocs),
            "overhead": lambda: overhead(base, pydocs),
            "memory": lambda: memory(base, pydocs),
        }
        if only in (None, "sets"):
            results["sets"] = quality(base, pydocs)
        for name, measure in phases.items():
            if only in (None, name):
                results[name] = measure()
    command = "python -m bench.eval" + (f" --only {only}" if only else "")
    results |= {"date": date.today().isoformat(), "machine": machine()}
    results.setdefault("commands", dict.fromkeys(PHASES, "python -m bench.eval"))
    for name in PHASES if only is None else (only,):
        results["commands"][name] = command
    results["command"] = "python -m bench.eval"
    write_results("eval", results)
    write_section(TITLE, readme_section(results))
    print(json.dumps(results, indent=2))


def readme_section(results: dict[str, Any]) -> str:
    machine_line = ", ".join(f"{key} {value}" for key, value in results["machine"].items())
    set_rows = []
    for name, found in results["sets"].items():
        if "skipped" in found:
            set_rows.append([name, "skipped: " + found["skipped"], "", "", "", ""])
            continue
        set_rows.append(
            [
                name,
                found["questions"],
                f"{found['hit@1']:.3f}",
                f"{found['hit@k']:.3f}",
                f"{found['mrr']:.3f}",
                f"{found['sourced']:.3f}",
            ]
        )
    speed = results["speed"]
    speed_rows = [
        [f"{latency:g} s"] + [speed[f"latency {latency:g} s, jobs {jobs}"] for jobs in JOBS]
        for latency in LATENCIES
    ]
    ray = speed["ray"]
    ray_line = ray.get("skipped") or (
        f"cluster start {ray['cluster_start_s']} s; {SPEED_QUESTIONS} questions (offline "
        f"provider, batches of 10, packing, two workers opening the pipeline included): "
        f"{ray['jobs 1: questions/s']} q/s with --jobs 1, {ray['jobs 4: questions/s']} q/s "
        "with --jobs 4"
    )
    over = results["overhead"]
    mem = results["memory"]
    return f"""`python -m bench.eval` ({results["date"]}; {machine_line}). `runner eval` on the
question sets of `bench/questions/` over a pipeline on the whole corpus (a `retrieve` tool with
top 5, the offline provider, the deep fallback). Raw figures: `bench/results/eval.json`.

{table(["set", "questions", "hit@1", "hit@5", "MRR", "gold among sources"], set_rows)}

Questions per second (the first {SPEED_QUESTIONS} pydocs users' questions; bench.simllm's
simulated LLM; the {speed["opening_s"]} s to open the pipeline left out):

{table(["LLM latency", *(f"--jobs {jobs}" for jobs in JOBS)], speed_rows)}

On a local Ray cluster (2 CPUs) beside it: {ray_line}.

At 0 s the rounds use the CPU, so on two CPUs more jobs cannot help; with a model's latency
the jobs overlap its waits. Ray's figures include starting its workers, each unpacking and
opening the pipeline: a cluster pays off with more machines, not on the one that runs it.

The eval's own overhead over a plain loop of the same rounds ({over["plain_ms_per_question"]} ms
a question; medians of {over.get("repeats", 1)} runs each, in turn):
{over["defaults: ms per question over plain"]} ms a question with the defaults,
{over.get("no report: ms per question over plain", "–")} ms without the report (which is drawn
once a run: {over.get("report_s", "–")} s, its plots included, whatever the set's size), and
{over["no traces, no report: ms per question over plain"]} ms without the traces either (a file
a question). A few milliseconds either way are this shared machine's noise: a negative figure
means the difference is smaller than it.

Peak memory evaluating {mem["questions"]:,} questions (--jobs 2, defaults): {mem["peak_mb"]} MB
({mem["seconds"]} s).

Measured again alone: `python -m bench.eval --only sets|speed|overhead|memory` (the other
figures are kept).
"""


if __name__ == "__main__":
    if sys.argv[1:2] == ["--memory"]:
        memory_child(*sys.argv[2:5])
    elif len(sys.argv) == 1:
        main()
    elif sys.argv[1:2] == ["--only"] and len(sys.argv) == 3:
        main(sys.argv[2])
    else:
        sys.exit(f"usage: python -m bench.eval [--only {'|'.join(PHASES)}]")
