"""Start-up and validation: runner's commands as whole processes, against `python -c pass`.

    python -m bench.startup [--runs 15] [--files 1000]

- `runner --help` and `runner validate pipelines/minimal.yaml`, each started `--runs` times,
  interleaved with `python -c pass` so that a busy moment of the machine hits all three alike;
  the median wall time of each;
- `runner validate <folder>` over `--files` generated pipeline files (each a realistic domain:
  prompt types, a corpus, a retrieval tool, a prompt tool with parameters and a clarifying
  question, a declarative coordinator with a conditional subtask, lookup and deep-search tools),
  in one process, timed whole (start-up included); the files are checked to be valid first.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import Any

from bench.readme import table, write_results, write_section

ROOT = Path(__file__).resolve().parent.parent
TITLE = "Start-up and validation"
TARGETS = {"help_over_python_s": 0.15, "validate_files_s": 3.0}

PIPELINE = """\
version: 1
domain: shop{number}
description: Answers customers' questions about the products of shop {number}.
llm: {{provider: offline}}
prompt_types:
  default: question
  types:
    question: A question about a product, an order or a policy.
    smalltalk:
      description: A greeting or thanks.
      pattern: "(?i)^(hi|hello|thanks)\\\\b"
corpora:
  handbook: {{path: corpus, pages: {{max_words: 200}}}}
retrieval_tool: handbook_rag
deep_fallback:
  coordinator: deep_search
  prompt_types: [question]
  gatekeeper: {{mode: rule, min_coverage: 0.5}}
limits: {{max_depth: 3, max_subtasks: 8}}
tools:
  - name: greeting
    kind: prompt
    activation: always
    prompt_types: [smalltalk]
    output: answer
    prompt: "Reply politely to: {{{{ task }}}}"
  - name: compare
    kind: prompt
    instruction: Does the user want to compare products of shop {number}?
    priority: 20
    consumes_context: true
    output: answer
    prompt: "Compare {{{{ context | length }}}} findings for: {{{{ task }}}}"
    decompose:
      extract:
        schema:
          type: object
          properties:
            products: {{type: array, items: {{type: string}}}}
      relevant_if: "params.products | default([]) | length >= 2"
      activate_after_subtasks: true
      subtasks:
        - name: specs
          for_each: params.products
          as: product
          prompt: "What are the specifications of {{{{ product }}}}?"
          required_tools: [products]
        - name: manual
          for_each: params.products
          as: product
          prompt: "What does the handbook say about {{{{ product }}}}?"
          required_tools: [handbook_search]
          conditional: {{skip_if_found: specs}}
  - name: warranty
    kind: prompt
    activation: {{keywords: [warranty, guarantee]}}
    output: guaranteed
    prompt: "The warranty of {{{{ params.model }}}} ({{{{ task }}}})"
    parameters:
      schema:
        type: object
        properties:
          model: {{type: string}}
        required: [model]
    clarify:
      question: Which model is it?
  - name: products
    kind: lookup
    activation: coordinator_only
    table: products.csv
    key: model
  - name: handbook_rag
    kind: retrieve
    priority: 5
    corpus: handbook
    top_k: 4
  - name: handbook_search
    kind: search
    activation: coordinator_only
    corpus: handbook
    max_brute_force_page_count: 40
  - name: handbook_neighbors
    kind: neighbor_search
    activation: coordinator_only
    corpus: handbook
  - name: deep_search
    kind: deep_search
    search_tool: handbook_search
    neighbor_search_tool: handbook_neighbors
"""


def runner_command() -> list[str]:
    """The `runner` console script beside this Python (how users start it)."""
    script = Path(sys.executable).parent / "runner"
    if not script.exists():
        raise SystemExit(f"the runner console script is not at {script}: pip install -e .")
    return [str(script)]


def timed(command: Sequence[str], cwd: Path) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stdout}")
    return seconds


def startup(runs: int) -> dict[str, float]:
    """Median wall seconds of each command, started `runs` times, interleaved."""
    runner = runner_command()
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "runner --help": [*runner, "--help"],
        "runner validate pipelines/minimal.yaml": [*runner, "validate", "pipelines/minimal.yaml"],
    }
    times: dict[str, list[float]] = {name: [] for name in commands}
    for command in commands.values():
        timed(command, ROOT)  # warm the file cache
    for _ in range(runs):
        for name, command in commands.items():
            times[name].append(timed(command, ROOT))
    return {name: round(statistics.median(values), 4) for name, values in times.items()}


def generate(folder: Path, count: int) -> None:
    """`count` pipeline files in `folder`, sharing one corpus folder and one product table."""
    (folder / "corpus").mkdir()
    (folder / "corpus" / "guide.md").write_text("# Guide\n\nHow to use the products.\n")
    (folder / "products.csv").write_text("model,name\nA-1,Kettle\nB-2,Toaster\n")
    for number in range(count):
        (folder / f"shop{number:04d}.yaml").write_text(PIPELINE.format(number=number))


def validate_many(count: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="runner-bench-validate-") as name:
        folder = Path(name)
        generate(folder, count)
        seconds = timed([*runner_command(), "validate", "--strict", str(folder)], ROOT)
        lines = sum(1 for _ in (folder / "shop0000.yaml").open())
    return {"files": count, "lines_per_file": lines, "seconds": round(seconds, 3)}


def section(results: dict[str, Any]) -> str:
    medians = results["startup"]
    python = medians["python -c pass"]
    rows = [
        [f"`{name}`", f"{seconds * 1000:.0f} ms", f"+{(seconds - python) * 1000:.0f} ms"]
        for name, seconds in medians.items()
    ]
    many = results["validate_many"]
    rows.append(
        [
            f"`runner validate --strict` on {many['files']:,} generated files "
            f"({many['lines_per_file']} lines each), one process",
            f"{many['seconds']:.2f} s",
            f"{many['seconds'] / many['files'] * 1000:.2f} ms a file",
        ]
    )
    machine = ", ".join(f"{key} {value}" for key, value in results["machine"].items())
    targets = results["targets"]
    help_over = medians["runner --help"] - python
    return f"""`{results["command"]}` ({results["date"]}; {machine}). Whole processes started
from Python (`subprocess.run`), median of {results["runs"]} runs each, interleaved. Raw figures:
`bench/results/startup.json`.

{table(["command", "wall time (median)", "over `python -c pass`"], rows)}

Targets: `runner --help` within {targets["help_over_python_s"] * 1000:.0f} ms of `python -c pass`
— {help_over * 1000:.0f} ms; {many["files"]:,} files validated in under
{targets["validate_files_s"]:.0f} s — {many["seconds"]:.2f} s.
"""


# --- one question, whole process, on the standard install -----------------------------------

QUESTION_TITLE = "One question on the standard install"
QUESTION = "How many years are oven spare parts stocked?"
# issue 29: one `runner run` with search by meaning, whole process, on two cores
QUESTION_TARGETS = {"wall_s": 1.5, "max_rss_mb": 200}


def measured(command: Sequence[str], cwd: Path) -> dict[str, float]:
    """Wall seconds, CPU seconds and peak memory (MB) of one process, from os.wait4."""
    started = time.perf_counter()
    process = subprocess.Popen(
        command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    if status != 0:
        raise SystemExit(f"{' '.join(command)} failed (status {status})")
    cpu = usage.ru_utime + usage.ru_stime
    return {"wall_s": seconds, "cpu_s": cpu, "max_rss_mb": usage.ru_maxrss / 1024}


def support_copy(folder: Path, mode: str) -> Path:
    """The support example in `folder`, its retrieve tool searching in `mode`, indexed."""
    shutil.copytree(ROOT / "pipelines" / "support", folder, ignore=shutil.ignore_patterns(".*"))
    path = folder / "support.yaml"
    text = path.read_text(encoding="utf-8")
    text = text.replace("    mode: hybrid ", f"    mode: {mode} ", 1)
    path.write_text(text, encoding="utf-8")
    subprocess.run([*runner_command(), "index", str(path)], capture_output=True, check=True)
    return path


def one_question(runs: int) -> dict[str, dict[str, float]]:
    """`runner run` of the support example on one question, by words and by meaning: the
    median of each figure over `runs` processes, interleaved (the first of each not counted:
    it fills the file cache)."""
    figures: dict[str, list[dict[str, float]]] = {"keyword": [], "hybrid": []}
    with tempfile.TemporaryDirectory(prefix="runner-bench-question-") as name:
        pipelines = {mode: support_copy(Path(name) / mode, mode) for mode in figures}
        commands = {
            mode: [*runner_command(), "run", str(path), QUESTION, "--llm", "offline"]
            for mode, path in pipelines.items()
        }
        for command in commands.values():
            measured(command, ROOT)
        for _ in range(runs):
            for mode, command in commands.items():
                figures[mode].append(measured(command, ROOT))
    return {
        mode: {key: round(statistics.median(run[key] for run in runs_), 3) for key in runs_[0]}
        for mode, runs_ in figures.items()
    }


def question_results(label: str, runs: int, commit: str | None = None) -> dict[str, Any]:
    """The figures of `label` ("before", "after", …) beside the other labels' last ones;
    `commit` names the code measured (default: this tree's HEAD)."""
    from bench.readme import read_results
    from bench.retrieval import machine

    previous = read_results("startup_question") or {}
    commit = (
        commit
        or subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
    )
    measured_now = {
        "date": date.today().isoformat(),
        "commit": commit,
        "machine": machine(),
        "runs": runs,
        "figures": one_question(runs),
    }
    return {
        "command": "python -m bench.startup --question LABEL",
        "question": QUESTION,
        "targets": QUESTION_TARGETS,
        "labels": {**previous.get("labels", {}), label: measured_now},
    }


def question_section(results: dict[str, Any]) -> str:
    rows = []
    for label, run in results["labels"].items():
        load = run["machine"].get("load_average_1min", "?")
        for mode, figures in run["figures"].items():
            rows.append(
                [
                    f"{label} ({run['commit']}, {run['date']}, load {load})",
                    "words (`keyword`)" if mode == "keyword" else "meaning (`hybrid`, rerank 20)",
                    f"{figures['wall_s']:.2f} s",
                    f"{figures['cpu_s']:.2f} s",
                    f"{figures['max_rss_mb']:.0f} MB",
                ]
            )
    targets = results["targets"]
    return f"""`{results["command"]}`: one `runner run` of the support example (560 pages, its
index built) on "{results["question"]}" with the offline provider, as a whole process
(os.wait4's figures), median of each figure over the runs, words and meaning interleaved. The
embedding model's ONNX graph is in the cache (a process's first use ever builds it: seconds).
`before` is the code before issue 29's cost work, `after` this tree. Targets: ≤
{targets["wall_s"]} s and ≤ {targets["max_rss_mb"]} MB with search by meaning. On a loaded
machine (a load average well above its two cores) the wall time is mostly the wait for a core:
the CPU column is what one process needs, and its wall time on idle cores. Raw figures:
`bench/results/startup_question.json`.

{table(["run", "search", "wall (median)", "CPU", "peak memory"], rows)}
"""


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.startup")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument(
        "--question",
        metavar="LABEL",
        help="Measure only one question on the standard install (`runner run`, words and "
        "meaning), filed under LABEL (e.g. before, after) beside the other labels' figures.",
    )
    parser.add_argument(
        "--commit",
        help="With --question: the commit of the code measured, when `runner` runs another "
        "tree's code (PYTHONPATH); default: this tree's HEAD.",
    )
    args = parser.parse_args(argv or [])
    if shutil.which("runner", path=str(Path(sys.executable).parent)) is None:
        print("skipped: the runner console script is not installed beside this Python")
        return
    if args.question:
        question = question_results(args.question, max(1, min(args.runs, 7)), args.commit)
        write_results("startup_question", question)
        write_section(QUESTION_TITLE, question_section(question))
        print(question_section(question))
        return
    from bench.retrieval import machine

    host = machine()
    results = {
        "date": date.today().isoformat(),
        "command": "python -m bench.startup" + "".join(f" {arg}" for arg in (argv or [])),
        "machine": host,
        "runs": args.runs,
        "startup": startup(args.runs),
        "validate_many": validate_many(args.files),
        "targets": TARGETS,
    }
    write_results("startup", results)
    write_section(TITLE, section(results))
    print(section(results))


if __name__ == "__main__":
    main(sys.argv[1:])
