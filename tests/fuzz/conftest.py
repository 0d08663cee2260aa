"""The fuzz tests change copies of the project's example files, never the files themselves."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from .mutations import ROOT


@pytest.fixture(scope="session")
def copies(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example pipelines and valid fixtures (with their templates, tables and corpora),
    copied once; a hostile file is written beside the file it was made from."""
    root = tmp_path_factory.mktemp("fuzz")
    ignore = shutil.ignore_patterns(".runner", "__pycache__")
    shutil.copytree(ROOT / "pipelines", root / "pipelines", ignore=ignore)
    shutil.copytree(ROOT / "tests" / "fixtures" / "valid", root / "tests/fixtures/valid")
    return root
