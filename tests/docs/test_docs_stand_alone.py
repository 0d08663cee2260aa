"""The project's docs stand alone: nothing a user receives points at a file outside the project.
The orchestrator's rules C1–C33 are stated in docs/orchestration.md, and every reference to
them points there, never at the specification they came from (it is not part of the project)."""

from __future__ import annotations

import re
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


RULES = [
    *(f"C{n}" for n in range(1, 34)),
    "C15a",
    *(f"C20{letter}" for letter in "abcde"),
]


def test_every_rule_c1_to_c33_is_stated_in_docs_orchestration_md() -> None:
    """Every reference to a rule points at docs/orchestration.md, so each one must be there."""
    text = (ROOT / "docs" / "orchestration.md").read_text(encoding="utf-8")
    stated = {rule for rule in RULES if re.search(rf"\b{rule}(?![0-9a-e])", text)}
    assert [rule for rule in RULES if rule not in stated] == []
    assert set(re.findall(r"\bC\d+[a-e]?", text)) <= set(RULES)  # and no rule that is not one
