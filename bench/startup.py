"""Start-up and validation: runner's commands as whole processes, against `python -c pass`.

    python -m bench.startup [--runs 15] [--files 1000]

- `runner --help` and `runner validate pipelines/minimal.yaml`, each started `--runs` times,
  interleaved with `python -c pass` so that a busy moment of the machine hits all three alike;
  the median wall time of each;
- `runner validate <folder>` over `--files` generated pipeline files (each a realistic domain:
  prompt types, a corpus, a retrieval tool, a prompt tool with parameters and a clarifying
  question, a declarative coordinator with a conditional subtask, lookup and deep-search tools),
  in one process, timed whole (start-up included); the files are checked to be valid first;
- `runner run` of one question with the offline LLM and a keyword search over the Python docs
  (`--docs`, about 8,400 pages) and over the same docs repeated under changed names up to
  `--pages` (100,000), the index built and the pipeline run once before: wall time, CPU time
  (user + system, from the child's own rusage) and peak memory, median of `--runs`. With
  `--baseline FOLDER` (an older checkout of runner, e.g. `git archive COMMIT | tar -x -C DIR`)
  each run of the current code is paired with one of the baseline's (A B A B, each with its own
  index), so that a busy moment of the machine hits both alike; the table gives their ratio.
  The corpus folders the benchmark makes are dated an hour back: runner trusts no folder
  changed in the last two seconds to be unchanged (it would list it again), and an author's
  corpus is rarely that fresh.
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

from bench.processes import checkout_env
from bench.readme import table, write_results, write_section
from bench.retrieval import PYDOCS

ROOT = Path(__file__).resolve().parent.parent
TITLE = "Start-up and validation"
TARGETS = {
    "help_over_python_s": 0.15,
    "validate_files_s": 3.0,
    "run_wall_s": 0.5,
    "run_cpu_s": 0.35,
}
QUESTION = "How do I sort a list with a key function?"
RUN_PIPELINE = """\
version: 1
domain: pydocs
description: Answers questions about Python from its documentation.
llm: {provider: offline}
corpora:
  docs: {path: corpus, include: ["**/*.rst.txt"], follow_symlinks: true, pages: {max_words: 250}}
retrieval_tool: docs_rag
tools:
  - name: docs_rag
    kind: retrieve
    description: The pages of the Python docs that match the question.
    corpus: docs
    top_k: 3
"""
AGED_SECONDS = 3600

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


def timed(command: Sequence[str], cwd: Path, env: dict[str, str] | None = None) -> float:
    started = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stdout}")
    return seconds


def startup(runs: int, baseline: Path | None = None) -> dict[str, float]:
    """Median wall seconds of each command, started `runs` times, interleaved; with a
    baseline, its `runner --help` and `runner validate` too ("… (baseline)")."""
    runner = runner_command()
    ours = checkout_env(ROOT)
    commands = {
        "python -c pass": ([sys.executable, "-c", "pass"], ours),
        "runner --help": ([*runner, "--help"], ours),
        "runner validate pipelines/minimal.yaml": (
            [*runner, "validate", "pipelines/minimal.yaml"],
            ours,
        ),
    }
    if baseline is not None:
        theirs = checkout_env(baseline)
        for name in ("runner --help", "runner validate pipelines/minimal.yaml"):
            commands[f"{name} (baseline)"] = (commands[name][0], theirs)
    times: dict[str, list[float]] = {name: [] for name in commands}
    for command, env in commands.values():
        timed(command, ROOT, env)  # warm the file cache
    for _ in range(runs):
        for name, (command, env) in commands.items():
            times[name].append(timed(command, ROOT, env))
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


def child_usage(command: Sequence[str], cwd: Path, env: dict[str, str]) -> dict[str, float]:
    """Wall seconds, CPU seconds (user + system) and peak memory (MB) of one child process."""
    started = time.perf_counter()
    child = subprocess.Popen(
        command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    errors = child.stderr.read().decode() if child.stderr else ""
    if child.stderr:
        child.stderr.close()
    if child.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({child.returncode}):\n{errors}")
    return {
        "wall_s": seconds,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "peak_mb": usage.ru_maxrss / 1024,
    }


def aged(folder: Path) -> None:
    """Every folder below `folder` (itself included) dated AGED_SECONDS back (links not
    followed: the documents linked in keep their dates)."""
    old = time.time() - AGED_SECONDS
    for here, names, _ in os.walk(folder):
        for name in names:
            os.utime(os.path.join(here, name), (old, old), follow_symlinks=False)
    os.utime(folder, (old, old))


def corpus_folder(folder: Path, docs: Path, pages: int | None) -> None:
    """`folder/corpus`: the docs linked in whole (pages None), or their files copied again
    under copyNN/, as many times as makes about `pages` pages. Copied, not linked: an author's
    corpus is files, and the stat of a link follows it to its target (at 100,000 pages, about
    6,000 of them), a cost no real corpus has."""
    corpus = folder / "corpus"
    if pages is None:
        corpus.symlink_to(docs)
        return
    files = sorted(path for path in docs.rglob("*.rst.txt") if path.is_file())
    copies = max(1, round(pages / DOCS_PAGES))
    for copy in range(1, copies + 1):
        for path in files:
            target = corpus / f"copy{copy:02d}" / path.relative_to(docs)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)


DOCS_PAGES = 8_379  # pages of the Python docs at 250 words (bench.retrieval counts them)


def run_systems(baseline: Path | None) -> dict[str, dict[str, str]]:
    """The environment each measured system runs with: this checkout, and the baseline's."""
    systems = {"runner": checkout_env(ROOT)}
    if baseline is not None:
        systems["baseline"] = checkout_env(baseline)
    return systems


def run_question(
    docs: Path, pages: int | None, runs: int, baseline: Path | None, base: Path
) -> dict[str, Any]:
    """`runner run` of one question, prepared once per system, then timed `runs` times each,
    the systems interleaved."""
    systems = run_systems(baseline)
    runner = runner_command()
    commands: dict[str, list[str]] = {}
    folders: dict[str, Path] = {}
    for name, env in systems.items():
        folder = base / f"{name}-{pages or 'docs'}"
        folder.mkdir()
        corpus_folder(folder, docs, pages)
        (folder / "pydocs.yaml").write_text(RUN_PIPELINE, encoding="utf-8")
        aged(folder)
        subprocess.run([*runner, "index", "pydocs.yaml"], cwd=folder, env=env, check=True,
                       capture_output=True)  # fmt: skip
        commands[name] = [*runner, "run", "pydocs.yaml", QUESTION]
        folders[name] = folder
        child_usage(commands[name], folder, env)  # the validation record, the file cache
    measured: dict[str, list[dict[str, float]]] = {name: [] for name in systems}
    for _ in range(runs):
        for name, env in systems.items():
            measured[name].append(child_usage(commands[name], folders[name], env))
    pages_found = pages_of(folders["runner"])
    figures: dict[str, Any] = {"pages": pages_found}
    for name, rows in measured.items():
        figures[name] = {
            key: round(statistics.median(row[key] for row in rows), 3) for key in rows[0]
        }
    return figures


def run_sizes(docs: Path, pages: int, runs: int, baseline: Path | None) -> dict[str, Any] | None:
    """`runner run` over the docs as they are and repeated to `pages`; None without the docs."""
    if not docs.is_dir():
        print(f"runner run: skipped: the Python docs are not at {docs}")
        return None
    with tempfile.TemporaryDirectory(prefix="runner-bench-run-") as name:
        return {
            "docs": run_question(docs, None, runs, baseline, Path(name)),
            "repeated": run_question(docs, pages, runs, baseline, Path(name)),
        }


def baseline_name(baseline: Path | None) -> str | None:
    """How the README names the baseline: its folder's name (e.g. the commit it holds)."""
    return baseline.name if baseline is not None else None


def pages_of(folder: Path) -> int:
    import json

    manifest = folder / ".runner" / "indexes" / "docs" / "manifest.json"
    return int(json.loads(manifest.read_text(encoding="utf-8"))["pages"])


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
{run_section(results)}"""


def run_section(results: dict[str, Any]) -> str:
    runs = results.get("run")
    if not runs:
        return ""
    targets = results["targets"]
    paired = all("baseline" in figures for figures in runs.values())
    rows = []
    for figures in runs.values():
        ours = figures["runner"]
        row = [
            f"{figures['pages']:,} pages",
            f"{ours['wall_s'] * 1000:.0f} ms",
            f"{ours['cpu_s'] * 1000:.0f} ms",
            f"{ours['peak_mb']:.0f} MB",
        ]
        if paired:
            before = figures["baseline"]
            row += [
                f"{before['wall_s'] * 1000:.0f} ms / {before['cpu_s'] * 1000:.0f} ms / "
                f"{before['peak_mb']:.0f} MB",
                f"{ours['wall_s'] / before['wall_s']:.2f}× / "
                f"{ours['cpu_s'] / before['cpu_s']:.2f}×",
            ]
        rows.append(row)
    header = ["corpus", "wall (median)", "CPU", "peak memory"]
    if paired:
        header += [f"before ({results['baseline']}): wall / CPU / memory", "after / before"]
    return f"""
`runner run pydocs.yaml "{QUESTION}"`: one question, the offline LLM, a keyword search (top 3)
over the Python docs and over them repeated under changed names; the index built and the
pipeline run once before (its validation record written), then {results["runs"]} runs each,
whole processes, median wall and CPU time (user + system of the process itself){
        ", each paired with a run of the baseline checkout (A B A B)" if paired else ""
    }.

{table(header, rows)}

Targets: a one-question `runner run` within {targets["run_wall_s"] * 1000:.0f} ms wall and
{targets["run_cpu_s"] * 1000:.0f} ms CPU on an idle two-core machine, whatever the corpus size.

Every process runs runner's modules from compiled bytecode, as an install has them
(bench/processes.py: the shell's PYTHONDONTWRITEBYTECODE would otherwise have each start
compile again every module a change touched, about 60 ms for the 31 modules a round imports).

**What a run costs, and what limits the figure.** Python's start and the imports a round needs
(click, asyncio, Jinja for the prompt templates, rich for the output, runner's config model,
engine and LLM layers), reading the pipeline's YAML and building its model (its validation
record proves it unchanged: the schema, the semantic checks and jsonschema are not imported),
the index's manifest and vocabulary, a stat of every corpus folder and file the manifest lists
(the folder is not listed), and the round itself; neither numpy nor bm25s is imported. What
grows with the corpus is that stat (about 6,000 files at 100,000 pages), the manifest that lists
them and the one query's sum over its terms' entries. The machine these figures come from is
shared (see the load average in the stamp): at a load above its two CPUs every process's wall
time stretches, and its CPU time grows too (caches and cores shared), so a figure a little past
a target here says little about an idle machine; the paired ratio is the figure that carries.
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
        command,
        cwd=cwd,
        env=checkout_env(ROOT),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
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
    parser.add_argument("--docs", type=Path, default=PYDOCS, help="the Python docs' folder")
    parser.add_argument("--pages", type=int, default=100_000, help="the larger corpus's pages")
    parser.add_argument("--baseline", type=Path, help="an older checkout of runner to pair with")
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
        "startup": startup(args.runs, args.baseline),
        "validate_many": validate_many(args.files),
        "targets": TARGETS,
        "baseline": baseline_name(args.baseline),
        "run": run_sizes(args.docs, args.pages, args.runs, args.baseline),
    }
    write_results("startup", results)
    write_section(TITLE, section(results))
    print(section(results))


if __name__ == "__main__":
    main(sys.argv[1:])
