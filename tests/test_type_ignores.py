"""Checked code (make lint runs mypy): every `# type: ignore` that remains names the error it
silences and says why, on its line or the line above, so a reader can judge it and mypy's
`warn_unused_ignores` can drop it once it is no longer needed."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
IGNORE = re.compile(r"#\s*type:\s*ignore(?P<code>\[[a-z, -]+\])?(?P<rest>.*)$")


def unexplained(text: str) -> list[tuple[int, str]]:
    lines = text.splitlines()
    found = []
    for number, line in enumerate(lines, start=1):
        match = IGNORE.search(line)
        if match is None:
            continue
        said_why = "#" in match["rest"] or lines[number - 2].strip().startswith("#")
        if match["code"] is None or not said_why:
            found.append((number, line.strip()))
    return found


def test_every_type_ignore_names_its_code_and_says_why() -> None:
    wrong = {
        str(path.relative_to(ROOT)): lines
        for folder in ("runner", "bench")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if (lines := unexplained(path.read_text(encoding="utf-8")))
    }
    assert wrong == {}


def test_a_bare_ignore_is_found() -> None:
    assert unexplained("x = 1\ny = f()  # type: ignore\n") == [(2, "y = f()  # type: ignore")]
    assert unexplained("y = f()  # type: ignore[misc]\n") == [(1, "y = f()  # type: ignore[misc]")]
    assert unexplained("# a reason\ny = f()  # type: ignore[misc]\n") == []
