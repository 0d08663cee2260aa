"""Fixtures the config tests share."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest


@pytest.fixture
def write_pipeline(tmp_path: Path) -> Callable[..., Path]:
    """Write pipeline text (and side files, by relative path) into tmp_path; returns its path."""

    def write(text: str, files: dict[str, str] | None = None, name: str = "pipeline.yaml") -> Path:
        for relative, content in (files or {}).items():
            target = tmp_path / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content, encoding="utf-8")
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    return write
