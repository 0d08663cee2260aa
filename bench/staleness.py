"""Whether a benchmark's figures are older than the code they measure, from the commit they
were stamped with and `git log`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bench.readme import git

# The code each benchmark measures: a figure is stale once a commit after its own changed any of
# these paths (its own bench module and the harness it drives included; bench/readme.py, which
# only writes the page, is not).
RUNNER = ("runner", "schemas", "templates")

MEASURES: dict[str, tuple[str, ...]] = {
    "multipart": (*RUNNER, "bench/multipart.py", "bench/simllm.py", "bench/pipelines"),
    "overhead": ("runner/engine", "runner/trace", "bench/overhead.py"),
    "startup": (*RUNNER, "bench/startup.py"),
    "bombs": ("runner/documents", "runner/config", "runner/templating", "bench/bombs.py"),
    "tables": ("runner/tables", "runner/documents", "runner/tools/lookup.py", "bench/tables.py"),
    "retrieval": ("runner/retrieval", "runner/text", "runner/config", "bench/retrieval.py"),
    "faq": (*RUNNER, "bench/faq.py"),
    "gatekeeper": (*RUNNER, "bench/gatekeeper.py", "bench/deep_pipeline.py", "bench/questions"),
    "users": (
        "runner/retrieval",
        "runner/embedding",
        "runner/text",
        "bench/users.py",
        "bench/rankers.py",
        "bench/questions",
    ),
    "answers": (*RUNNER, "bench/answers.py", "bench/deep_pipeline.py", "bench/questions"),
    "reach": (
        "runner/retrieval",
        "runner/embedding",
        "runner/text",
        "bench/reach.py",
        "bench/users.py",
        "bench/questions",
    ),
    "index_open": ("runner/retrieval", "runner/config", "bench/index_open.py"),
    "vector_search": ("runner/retrieval", "runner/embedding", "bench/vector_search.py"),
    "embed_runtimes": ("runner/embedding", "bench/embed_runtimes.py"),
    "serve": (*RUNNER, "bench/serve.py"),
    "realmodel": (*RUNNER, "bench/realmodel.py", "bench/llama_server.py"),
    "streaming": (*RUNNER, "bench/streaming.py"),
}


def staleness(name: str, results: Mapping[str, Any]) -> str | None:
    """Why a benchmark's figures are older than the code they measure, or None when they are
    not: a commit after the figures' own changed a path of MEASURES[name] (`git log`)."""
    commit = (results.get("stamp") or {}).get("commit")
    if not commit:
        return "not stamped with the commit it measured"
    paths = MEASURES.get(name, RUNNER)
    if git("cat-file", "-e", f"{commit}^{{commit}}") is None:
        return f"measured at {commit[:10]}, a commit this history does not hold"
    newer = git("log", "-1", "--format=%h %s", f"{commit}..HEAD", "--", *paths)
    if newer is None:
        return None
    if newer:
        return f"{', '.join(paths)} changed after {commit[:10]}: {newer[:90]}"
    return None
