"""Whether a benchmark's figures are older than the code they measure, from the commit they
were stamped with and `git log`: the runner code and data of MEASURES, and the benchmark's own
bench module with every bench module it imports (found by reading their imports, so that a
module split out of a benchmark is measured with it without being listed here)."""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from bench import readme
from bench.readme import git

# The runner code and the data each benchmark measures: a figure is stale once a commit after
# its own changed any of these paths or one of its bench modules (`bench_modules`).
RUNNER = ("runner", "schemas", "templates")

MEASURES: dict[str, tuple[str, ...]] = {
    "multipart": (*RUNNER, "bench/pipelines"),
    "overhead": ("runner/engine", "runner/trace"),
    "startup": RUNNER,
    "bombs": ("runner/documents", "runner/config", "runner/templating"),
    "tables": ("runner/tables", "runner/documents", "runner/tools/lookup.py"),
    "retrieval": ("runner/retrieval", "runner/text", "runner/config"),
    "faq": RUNNER,
    "gatekeeper": (*RUNNER, "bench/questions"),
    "users": (
        "runner/retrieval",
        "runner/embedding",
        "runner/text",
        "bench/questions",
    ),
    "answers": (*RUNNER, "bench/questions"),
    "reach": (
        "runner/retrieval",
        "runner/embedding",
        "runner/text",
        "bench/questions",
    ),
    "index_open": ("runner/retrieval", "runner/config"),
    "vector_search": ("runner/retrieval", "runner/embedding"),
    "embed_runtimes": ("runner/embedding",),
    "serve": RUNNER,
    "realmodel": RUNNER,
    "streaming": RUNNER,
    "eval": (*RUNNER, "bench/questions"),
    "rewrite": (*RUNNER, "bench/questions"),
    "page_vectors": (*RUNNER, "bench/questions"),
}

# A results file other than <benchmark>.json: the benchmark that writes it.
PRODUCED_BY = {"startup_question": "startup"}

# Bench modules that only write the page (the README, its sections, this check): a change to
# one changes no figure.
PRESENTS = ("readme", "staleness", "summary", "summary_cost", "summary_quality")
# Names that describe, not measure: importing only these (bench.retrieval's `machine`, the
# computer a run was on) does not make their module measured code.
DESCRIBES = frozenset({"machine"})


def bench_modules(name: str) -> list[str]:
    """bench/<name>.py and every bench module it imports, directly or through another, as paths
    (read, not imported), but those that only present figures (PRESENTS, `*_report`)."""
    found: list[str] = []
    todo = [name]
    while todo:
        module = todo.pop()
        path = readme.BENCH / f"{module}.py"
        if module in found or not path.is_file():
            continue
        found.append(module)
        todo += [
            imported
            for imported in _imports(path.read_text(encoding="utf-8"))
            if imported not in PRESENTS and not imported.endswith("_report")
        ]
    return [f"bench/{module}.py" for module in sorted(found)]


def _imports(source: str) -> list[str]:
    """The bench modules a module's source imports (`from bench import x`, `from bench.x import
    y`, `import bench.x`), at its top or inside a function."""
    names: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module == "bench":
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("bench."):
            if {alias.name for alias in node.names} <= DESCRIBES:
                continue
            names.append((node.module or "").split(".")[1])
        elif isinstance(node, ast.Import):
            names += [a.name.split(".")[1] for a in node.names if a.name.startswith("bench.")]
    return names


def measured_paths(name: str) -> tuple[str, ...]:
    """Every path whose change makes the figures of results `name` stale."""
    benchmark = PRODUCED_BY.get(name, name)
    return (*MEASURES.get(benchmark, RUNNER), *bench_modules(benchmark))


def staleness(name: str, results: Mapping[str, Any]) -> str | None:
    """Why a benchmark's figures are older than the code they measure, or None when they are
    not: a commit after the figures' own changed one of `measured_paths(name)` (`git log`)."""
    commit = (results.get("stamp") or {}).get("commit")
    if not commit:
        return "not stamped with the commit it measured"
    paths = measured_paths(name)
    if git("cat-file", "-e", f"{commit}^{{commit}}") is None:
        return f"measured at {commit[:10]}, a commit this history does not hold"
    # the newest commit since that changed them (not a merge: it would name no file) and the
    # measured files it changed
    log = ("log", "-1", "--no-merges", "--format=%h %s", "--name-only")
    newer = git(*log, f"{commit}..HEAD", "--", *paths)
    if not newer:
        return None
    subject, *changed = [line for line in newer.splitlines() if line]
    named = ", ".join(changed[:3]) + (f" and {len(changed) - 3} more" if len(changed) > 3 else "")
    return f"{named} changed after {commit[:10]}: {subject[:90]}"
