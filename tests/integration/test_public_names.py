"""Packages use each other only through public names: a `_private` name imported from another
package is a seam that breaks silently when its owner renames it."""

from __future__ import annotations

import ast
from pathlib import Path

RUNNER = Path(__file__).resolve().parents[2] / "runner"


def package_of(module: str) -> str:
    """`runner.config.formats` -> `runner.config`; a top-level module is its own package."""
    parts = module.split(".")
    return ".".join(parts[:2])


def module_name(path: Path) -> str:
    relative = path.relative_to(RUNNER.parent).with_suffix("")
    parts = relative.parts[:-1] if relative.name == "__init__" else relative.parts
    return ".".join(parts)


def private_imports_across_packages(path: Path) -> list[str]:
    here = package_of(module_name(path))
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("runner"):
            if package_of(node.module) == here:
                continue
            for alias in node.names:
                if alias.name.startswith("_"):
                    found.append(f"{module_name(path)}:{node.lineno} {node.module}.{alias.name}")
    return found


def test_no_package_imports_another_package_s_private_names() -> None:
    offenders = [
        hit for path in RUNNER.rglob("*.py") for hit in private_imports_across_packages(path)
    ]
    assert offenders == []


def test_the_config_package_offers_the_folder_search_it_shares() -> None:
    import runner.config

    assert {"find_yaml_files", "yaml_files"} <= set(runner.config.__all__)
