"""Imports flow one way (design.md): cli → config → engine → tools → llm / retrieval.

The engine knows tools only through its protocols; the LLM and retrieval layers know nothing of
the engine or the tools; no library module reaches back into a command module. A test, not a
convention, because one stray import is all it takes to turn the layers into a knot."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "runner"

# layer -> the runner packages it must never import
FORBIDDEN: dict[str, set[str]] = {
    "engine": {"tools", "app", "cli", "testing", "explain", "sessions", "retrieval", "demo"},
    "llm": {"engine", "tools", "retrieval", "app", "cli", "testing", "explain", "sessions"},
    "retrieval": {"engine", "tools", "app", "cli", "testing", "explain", "sessions"},
    "tools": {"app", "cli", "testing", "explain", "sessions"},
    "config": {"engine", "tools", "retrieval", "app", "cli", "testing", "explain", "sessions"},
    "sessions": {"tools", "app", "cli", "testing", "explain", "retrieval"},
    "explain": {"cli", "testing", "app"},
    "testing": {"cli"},
    # the service is a face beside the CLI: it calls runner.app, never the engine's insides
    "serve": {"engine", "tools", "llm", "retrieval", "cli", "testing", "explain"},
}


def imported_runner_packages(path: Path) -> set[str]:
    packages: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        for name in names:
            parts = name.split(".")
            if parts[0] == "runner" and len(parts) > 1:
                packages.add(parts[1])
    return packages


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_a_layer_never_imports_the_layers_above_it(layer: str) -> None:
    offending = {
        str(path.relative_to(PACKAGE.parent)): sorted(imported_runner_packages(path) & banned)
        for banned in [FORBIDDEN[layer]]
        for path in sorted((PACKAGE / layer).rglob("*.py"))
        if imported_runner_packages(path) & banned
    }
    assert offending == {}
