"""bench/README.md is written by the benchmarks, one `## ` section each, in a fixed order; a
benchmark replaces its own section and leaves the others alone. JSON results go to
bench/results/<name>.json."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
README = BENCH / "README.md"
RESULTS = BENCH / "results"

# The order sections appear in; a section not listed goes at the end.
SECTIONS = (
    "Summary",
    "Multi-part questions: runner and LlamaIndex",
    "Engine overhead: runner, LangGraph and asyncio",
    "Start-up and validation",
    "One question on the standard install",
    "Hostile input: bombs and oversized files",
    "Lookup tables: the key index on disk",
    "Retrieval",
    "Python FAQ over all of pydocs",
    "The offline gatekeeper on the question sets",
    "Questions in users' words",
    "Answers in users' words: sources and answer checks",
    "How far reordering can reach",
    "Embedding runtimes: numpy and onnxruntime",
    "Query rewriting with SmolLM2-135M",
    "What a page's vector covers",
    "Index open and the PostgreSQL manual",
    "Page vectors: open and exact search",
    "Hybrid queries on real corpora",
    "A real model: SmolLM2-135M with and without constrained decoding",
    "Serving: rounds over HTTP, two workers on PostgreSQL",
    "Streaming and OpenTelemetry: time to the first token, and telemetry's cost",
    "runner eval: question sets, speed and memory",
)

HEADER = """# Benchmarks

Every figure here is written by `make bench` (`python -m bench`; one benchmark alone:
`python -m bench <name>`), with the command that produced it. Raw figures are in
`bench/results/*.json`; `docs/bench.md` says what each benchmark measures and how to read it.
They are figures to track, not tests: `tests/bench/` only checks that the harness works on tiny
sizes.
"""


def git(*arguments: str) -> str | None:
    """A git command's output in the repository (paths relative to its root), stripped; None
    when git cannot answer."""
    try:
        done = subprocess.run(
            ["git", *arguments], cwd=BENCH.parent, capture_output=True, text=True, check=False
        )
    except OSError:
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def stamp() -> dict[str, Any]:
    """What a figure was measured with: the commit checked out (and whether tracked files
    differed from it), and the machine's load average (1, 5 and 15 minutes) as it is written:
    the 5- and 15-minute figures cover the run that made it."""
    return {
        "commit": git("rev-parse", "HEAD"),
        "uncommitted_changes": bool(git("status", "--porcelain", "--untracked-files=no")),
        "load_average": [round(load, 2) for load in os.getloadavg()],
    }


def stamp_line(found: dict[str, Any]) -> str:
    commit = (found.get("commit") or "unknown")[:10]
    changes = " with uncommitted changes" if found.get("uncommitted_changes") else ""
    loads = " / ".join(f"{load:.2f}" for load in found.get("load_average", ()))
    return f"_Measured at commit `{commit}`{changes}; load average {loads} (1, 5, 15 min)._"


def write_section(
    title: str, body: str, readme: Path | None = None, stamped: dict[str, Any] | None = None
) -> None:
    """Replace the `## title` section of the README (or insert it in its place in SECTIONS),
    stamped with the commit and the load average (now, or the `stamped` results' own)."""
    readme = readme or README
    text = readme.read_text(encoding="utf-8") if readme.exists() else HEADER
    sections = _split(text)
    found = (stamped or {}).get("stamp") or stamp()
    sections[title] = f"## {title}\n\n{stamp_line(found)}\n\n{body.strip()}\n"
    head = text.split("\n## ", 1)[0].rstrip("\n") + "\n"
    if head.strip() == HEADER.splitlines()[0]:  # a bare title: add what this page is
        head = HEADER
    ordered = sorted(sections, key=lambda name: _rank(name, list(sections)))
    readme.write_text(
        head + "".join(f"\n{sections[name].rstrip()}\n" for name in ordered), encoding="utf-8"
    )


def _split(text: str) -> dict[str, str]:
    """The README's `## ` sections by title, in file order."""
    found = {}
    for match in re.finditer(r"^## (.+?)\n(.*?)(?=^## |\Z)", text, re.MULTILINE | re.DOTALL):
        found[match[1].strip()] = match[0]
    return found


def _rank(title: str, present: list[str]) -> tuple[int, int]:
    known = SECTIONS.index(title) if title in SECTIONS else len(SECTIONS)
    return known, present.index(title)


def write_results(name: str, results: dict[str, Any], folder: Path | None = None) -> Path:
    """bench/results/<name>.json, stamped (see `stamp`) unless the results carry a stamp."""
    folder = folder or RESULTS
    folder.mkdir(parents=True, exist_ok=True)
    results = {**results, "stamp": results.get("stamp") or stamp()}
    path = folder / f"{name}.json"
    path.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return path


def read_results(name: str, folder: Path | None = None) -> dict[str, Any] | None:
    path = (folder or RESULTS) / f"{name}.json"
    if not path.is_file():
        return None
    return json.loads(path.read_text(encoding="utf-8"))


Row = list[str]  # a table row: its cells


def met(ok: bool) -> str:
    """A row's last cell: whether the figure meets its target."""
    return "met" if ok else "**missed** (see below)"


def table(header: list[str], rows: list[list[Any]]) -> str:
    """A markdown table."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)
