"""The project's docs stand alone: nothing a user receives points at a file outside the project.
The orchestrator's rules C1–C33 are stated in docs/orchestration.md, and every reference to
them points there, never at the specification they came from (it is not part of the project)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ("runner", "docs", "templates", "schemas", "pipelines", "README.md")
OUTSIDE = ("coordination.md", "../shared")


def shipped_files() -> list[Path]:
    files: list[Path] = []
    for name in SHIPPED:
        path = ROOT / name
        files += [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    return [p for p in files if "__pycache__" not in p.parts and p.suffix != ".pyc"]


@pytest.mark.parametrize("pointer", OUTSIDE)
def test_nothing_shipped_points_outside_the_project(pointer: str) -> None:
    offending = []
    for path in shipped_files():
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        if pointer in text:
            offending.append(str(path.relative_to(ROOT)))
    assert offending == []
