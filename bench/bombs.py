"""Hostile input: bombs and oversized files, each in a fresh process, timed, its memory measured.

    python -m bench.bombs [--quick]

- YAML files `runner validate` must refuse (or accept) within 2 s and 500 MB: deep nesting, a
  50 MB list, a 9 MB list under the size limit, 750,000 keys, a billion laughs, a 9 MB line, a
  NUL byte, and thousands of tools with a misspelt name each ("did you mean" over them all).
  Each is validated in a process of its own (the report rendered as `runner validate` prints
  it), so its peak resident memory is its own.
- Templates and expressions that would exhaust the machine (`'a' * 10**9`, `[1] * 10**9`,
  `center`, `format` widths, nested `range` loops, the same in `relevant_if` / `for_each`),
  rendered in the one sandboxed environment: each must stop with a RenderBudgetError.
- Lookup tables of 100,000 and 1,000,000 rows: load and index once, then a question's lookup and
  its extraction prompt's known values; beside them, the per-question scan of every key that the
  index replaced, on the same 100,000-row table (the ratio is the figure to track).

Every child runs under a 3 GiB address-space limit, so that a regression fails its case instead
of the shared machine. `--quick` makes every file and table 10 times smaller (for the harness
test).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import date
from pathlib import Path
from typing import Any

from bench.readme import table, write_results, write_section

TITLE = "Hostile input: bombs and oversized files"
TARGETS = {"seconds": 2.0, "peak_mb": 500}
MEMORY_CAP = 3 * 1024**3

# name -> a function of the scale (1 or 0.1) that gives the file's text
YAML_BOMBS: dict[str, Callable[[float], str]] = {
    "nesting 500 deep": lambda s: "a: " + "[" * 500 + "]" * 500 + "\n",
    "a 50 MB list": lambda s: "- a\n" * int(12_500_000 * s),
    "a 9 MB list (under the size limit)": lambda s: "- ab\n" * int(1_800_000 * s),
    "750,000 keys": lambda s: "".join(f"k{i}: v\n" for i in range(int(750_000 * s))),
    "a billion laughs": lambda s: _laughs(),
    "a 9 MB line": lambda s: "domain: x" + "y" * int(9_000_000 * s) + "\ntools: []\n",
    "a NUL byte": lambda s: "domain: shop\ntools: [a\x00]\n",
    "9,500 tools, 1,500 of them naming unknown tools": lambda s: _many_names(s),
}

TEMPLATE_BOMBS = {
    "`'a' * 10**9`": ("render", "{{ 'a' * 10**9 }}"),
    "`[1] * 10**9`": ("render", "{{ [1] * 10**9 }}"),
    "`'a'|center(2000000000)`": ("render", "{{ 'a'|center(2000000000) }}"),
    "`'%2000000000s'|format`": ("render", "{{ '%2000000000s'|format('x') }}"),
    "nested `range(100000)` loops": (
        "render",
        "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
    ),
    "a string doubled 64 times": (
        "render",
        "{% set ns = namespace(s='ab') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}"
        "{% endfor %}",
    ),
    "`relevant_if: ([1] * 10**9) | length > 0`": ("evaluate", "([1] * 10**9) | length > 0"),
    "`for_each: 'a' * 10**9`": ("evaluate", "'a' * 10**9"),
}


def _many_names(scale: float) -> str:
    tools = [f"  - {{name: t{i}, kind: prompt, prompt: hi}}\n" for i in range(int(8000 * scale))]
    tools += [
        f"  - {{name: c{i}, kind: prompt, prompt: hi, decompose: "
        f"{{subtasks: [{{prompt: x, required_tools: [tx{i}]}}]}}}}\n"
        for i in range(int(1500 * scale))
    ]
    return "domain: shop\ntools:\n" + "".join(tools)


def _laughs() -> str:
    lines = ["a: &a [" + ", ".join(["lol"] * 10) + "]"]
    for index, name in enumerate("bcdefghi"):
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{'abcdefghi'[index]}"] * 10) + "]")
    return "domain: shop\n" + "\n".join(lines) + "\ntools: []\n"


# --- children: one case each, measured from the inside -----------------------------------


def _peak_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def child_validate(path: Path) -> dict[str, Any]:
    from runner.config import validate_file
    from runner.config.formats import format_reports

    started = time.perf_counter()
    report = validate_file(path)
    output = format_reports([report], "text")
    seconds = time.perf_counter() - started
    codes = sorted({d.code for d in report.diagnostics})
    return {"seconds": seconds, "codes": codes, "output_bytes": len(output.encode())}


def child_template(how: str, source: str) -> dict[str, Any]:
    from runner.templating import environment as templates

    started = time.perf_counter()
    try:
        getattr(templates, how)(source, {})
        outcome = "rendered"
    except templates.RenderBudgetError as error:
        outcome = "RenderBudgetError: " + _what(str(error))
    return {"seconds": time.perf_counter() - started, "outcome": outcome}


def _what(message: str) -> str:
    """`*` repetition, `center`, `range()`…: what a budget error says ran out, in short."""
    for verb in (" would ", " takes ", " calls "):
        if verb in message:
            return message.split(verb, 1)[0]
    return message[:60]


def child_lookup(rows: int) -> dict[str, Any]:
    from runner.documents.table_files import shared_rows, table_version
    from runner.llm.known_values import known_values
    from runner.tables.index import KeyIndex

    with tempfile.TemporaryDirectory(prefix="runner-bench-bombs-") as name:
        table = _write_table(Path(name), rows)
        started = time.perf_counter()
        loaded = shared_rows(table_version(table))
        load_s = time.perf_counter() - started
        started = time.perf_counter()
        index = KeyIndex(loaded, ("codename", "version"))
        index_s = time.perf_counter() - started
        question = f"What does code{rows // 2} cost, and Release {rows - 1}?"
        started = time.perf_counter()
        for _ in range(100):
            found = index.find(question)
            index.rows_for(*found)
        question_ms = (time.perf_counter() - started) * 10
        listed = len(_known(known_values, table, question))
    return {
        "rows": rows,
        "load_s": load_s,
        "index_s": index_s,
        "question_ms": question_ms,
        "found": found,
        "listed": listed,
    }


def child_scan(rows: int) -> dict[str, Any]:
    """The lookup as it was before the index: every key tokenized and compared per question."""
    from runner.text.words import tokenize

    keys = [f"code{i}" for i in range(rows)] + [f"Release {i}" for i in range(rows)]
    question = f"What does code{rows // 2} cost, and Release {rows - 1}?"
    started = time.perf_counter()
    tokens = tokenize(question)
    keyed = sorted(((k, tokenize(k)) for k in keys), key=lambda kt: (-len(kt[1]), -len(kt[0])))
    found = [
        key
        for key, wanted in keyed
        if any(tokens[i : i + len(wanted)] == wanted for i in range(len(tokens) - len(wanted) + 1))
    ]
    return {"rows": rows, "question_ms": (time.perf_counter() - started) * 1000, "found": found}


def _write_table(folder: Path, rows: int) -> Path:
    table = folder / "releases.csv"
    with table.open("w", encoding="utf-8") as handle:
        handle.write("codename,version,price\n")
        handle.writelines(f"code{i},Release {i},{i}\n" for i in range(rows))
    return table


def _known(known_values: Callable[..., Any], table: Path, question: str) -> list[str]:
    from runner.config.model import LookupOptions, Pipeline, ToolConfig, ToolKind

    options = LookupOptions(table=table, key="codename", key_columns=("codename", "version"))
    tool = ToolConfig(name="releases", kind=ToolKind.LOOKUP, options=options)
    pipeline = Pipeline(domain="bench", tools=(tool,), path=table.parent / "p.yaml")
    return [value for values in known_values(pipeline, question).values() for value in values]


def run_child(arguments: Sequence[str]) -> dict[str, Any]:
    """One case in a fresh Python, under the memory cap; its figures, its peak memory added."""
    command = [sys.executable, "-m", "bench.bombs", "--child", *arguments]
    started = time.perf_counter()
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=300, preexec_fn=_cap_memory, check=False
    )
    wall = time.perf_counter() - started
    if done.returncode != 0:
        return {"failed": done.stderr.strip().splitlines()[-1:], "wall_s": wall}
    return {**json.loads(done.stdout.strip().splitlines()[-1]), "wall_s": wall}


def _cap_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def child_main(arguments: Sequence[str]) -> None:
    kind, *rest = arguments
    if kind == "validate":
        figures = child_validate(Path(rest[0]))
    elif kind == "template":
        figures = child_template(rest[0], rest[1])
    elif kind == "lookup":
        figures = child_lookup(int(rest[0]))
    else:
        figures = child_scan(int(rest[0]))
    print(json.dumps({**figures, "peak_mb": _peak_mb()}))


# --- the run ------------------------------------------------------------------------------


def measure(scale: float) -> dict[str, Any]:
    results: dict[str, Any] = {"yaml": {}, "templates": {}, "lookup": {}}
    with tempfile.TemporaryDirectory(prefix="runner-bench-bombs-") as name:
        for case, make in YAML_BOMBS.items():
            path = Path(name) / "bomb.yaml"
            text = make(scale)
            path.write_text(text, encoding="utf-8")
            figures = run_child(["validate", str(path)])
            results["yaml"][case] = {**figures, "file_bytes": len(text.encode())}
    for case, (how, source) in TEMPLATE_BOMBS.items():
        results["templates"][case] = run_child(["template", how, source])
    for rows in (int(100_000 * scale), int(1_000_000 * scale)):
        results["lookup"][str(rows)] = run_child(["lookup", str(rows)])
    results["lookup"]["scan"] = run_child(["scan", str(int(100_000 * scale))])
    return results


def section(results: dict[str, Any]) -> str:
    seconds, peak = results["targets"]["seconds"], results["targets"]["peak_mb"]
    yaml_rows = [
        [
            case,
            f"{figures.get('file_bytes', 0) / 1e6:.1f} MB",
            ", ".join(figures.get("codes", [])) or figures.get("failed", ["?"])[0],
            f"{figures.get('seconds', float('nan')):.2f} s",
            f"{figures.get('peak_mb', 0):.0f} MB",
            f"{figures.get('output_bytes', 0):,} B",
            "✅" if _within(figures, seconds, peak) else "❌",
        ]
        for case, figures in results["yaml"].items()
    ]
    template_rows = [
        [
            _cell(case),
            _cell(figures.get("outcome") or figures.get("failed", ["?"])[0]),
            f"{figures.get('seconds', float('nan')):.3f} s",
            f"{figures.get('peak_mb', 0):.0f} MB",
            "✅" if _within(figures, seconds, peak) and _stopped(figures) else "❌",
        ]
        for case, figures in results["templates"].items()
    ]
    lookup = results["lookup"]
    scan = lookup.pop("scan")
    lookup_rows = [
        [
            f"{int(rows):,} rows, two key columns",
            f"{figures['load_s']:.2f} s",
            f"{figures['index_s']:.2f} s",
            f"{figures['question_ms']:.3f} ms",
            f"{figures['listed']}",
            f"{figures['peak_mb']:.0f} MB",
        ]
        for rows, figures in lookup.items()
        if "failed" not in figures
    ]
    smallest = lookup[min(lookup, key=int)]
    ratio = scan["question_ms"] / max(smallest.get("question_ms", 1e-9), 1e-9)
    machine = ", ".join(f"{key} {value}" for key, value in results["machine"].items())
    return f"""`{results["command"]}` ({results["date"]}; {machine}). Each case in a fresh
process (its own peak resident memory, interpreter included), under a 3 GiB address-space cap.
Raw figures: `bench/results/bombs.json`. Before this work (issue 11): the 50 MB list took 87 s
and 3.9 GB, 750k keys 12 s and 722 MB (reported as alias expansion), nesting past ~495 levels
crashed, and every template bomb ran past 20 s or 1 GB.

`runner validate` on a hostile file (target: accepted or refused within {seconds:.0f} s and
{peak} MB; "report" is the size of what `runner validate` prints):

{table(["file", "size", "codes", "time", "peak memory", "report", ""], yaml_rows)}

Templates and expressions, rendered in the sandbox with the render budget (docs/validate.md):

{table(["template", "outcome", "time", "peak memory", ""], template_rows)}

Lookup tables (`key: [codename, version]`): loaded and indexed once, then one question's lookup
(mean of 100) and how many known values its extraction prompt lists (at most 200):

{table(["table", "load", "index", "a question", "values listed", "peak memory"], lookup_rows)}

The scan of every key per question that the index replaced takes {scan["question_ms"]:.0f} ms on
the {int(scan["rows"]):,}-row table: **{ratio:,.0f}×** the indexed lookup. Loading and indexing
are paid once per table version and process; the memory of the largest table is mostly its rows
(one dict each, as runner.documents.table_files holds every table), not the index.
"""


def _cell(text: str) -> str:
    return text.replace("|", "\\|")  # a `|` in a template would end a table cell


def _stopped(figures: dict[str, Any]) -> bool:
    return str(figures.get("outcome", "")).startswith("RenderBudgetError")


def _within(figures: dict[str, Any], seconds: float, peak: float) -> bool:
    return (
        "failed" not in figures
        and figures.get("seconds", 1e9) <= seconds
        and figures.get("peak_mb", 1e9) <= peak
    )


def main(argv: Sequence[str] | None = None) -> None:
    arguments = list(argv or [])
    if arguments[:1] == ["--child"]:
        child_main(arguments[1:])
        return
    parser = argparse.ArgumentParser(prog="python -m bench.bombs")
    parser.add_argument("--quick", action="store_true", help="files and tables 10 times smaller")
    args = parser.parse_args(arguments)
    from bench.retrieval import machine

    results = {
        "date": date.today().isoformat(),
        "command": "python -m bench.bombs" + "".join(f" {arg}" for arg in arguments),
        "machine": machine(),
        "targets": TARGETS,
        **measure(0.1 if args.quick else 1.0),
    }
    if args.quick:
        print(json.dumps(results, indent=2))
        return
    write_results("bombs", results)
    write_readme_section(results)


def write_readme_section(results: dict[str, Any]) -> None:
    text = section(json.loads(json.dumps(results)))
    write_section(TITLE, text)
    print(text)


if __name__ == "__main__":
    main(sys.argv[1:])
