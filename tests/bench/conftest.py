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


@pytest.fixture
def questions(tmp_path: Path) -> Path:
    """A folder holding `tiny.csv`: a question set (bench/questions' columns) of two questions
    the `docs` fixture answers, each with its gold section."""
    folder = tmp_path / "questions"
    folder.mkdir()
    (folder / "tiny.csv").write_text(
        "id,question,sources,tags\n"
        "q1,how do I sort with a key function,howto/sorting.rst.txt#Sorting HOWTO,\n"
        "q2,what does the with statement do,reference/compound.rst.txt#The with statement,\n",
        encoding="utf-8",
    )
    return folder


@pytest.fixture
def embed_model() -> None:
    """Skips a test without the `embed` extra and its model (as tests/embed does in a plain
    `make test`); the tiny runs that embed ask for it."""
    from runner.embedding import DEFAULT_MODEL, ModelUnavailable
    from runner.embedding.catalog import locate

    try:
        locate(DEFAULT_MODEL)
        import onnxruntime  # noqa: F401  (the default runtime's own)
    except (ModelUnavailable, ImportError) as error:
        pytest.skip(f"the `embed` extra and its model are not installed: {error}")
