"""Smoke tests of the benchmark harness (`bench/`) on tiny sizes, so that it cannot rot between
`make bench` runs. They check what the harness computes, never how fast anything is."""

from __future__ import annotations

from pathlib import Path

import pytest
from benchkit import DOCS


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    for name, text in DOCS.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return folder


@pytest.fixture
def readme_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """bench/README.md and bench/results/ redirected to a temporary folder."""
    import bench.readme

    path = tmp_path / "README.md"
    monkeypatch.setattr(bench.readme, "README", path)
    monkeypatch.setattr(bench.readme, "RESULTS", tmp_path / "results")
    return path
