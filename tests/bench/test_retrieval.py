"""bench.retrieval end to end on a tiny copy of the Python docs: its phases build and query an
index over docs linked into its state folder (it once stopped at PathOutsideFolder, naming the
docs' own folder as a corpus outside the pipeline's), and it writes its results and section."""

from __future__ import annotations

import json
from pathlib import Path

from bench import retrieval


def test_the_benchmark_runs_on_a_tiny_docs_folder(docs: Path, readme_path: Path) -> None:
    (docs / "faq" / "general.rst.txt").write_text(
        "General FAQ\n===========\n\nWhy is it called Python?\n------------------------\n\n"
        "After a comedy show.\n",
        encoding="utf-8",
    )
    retrieval.main(["--docs", str(docs)])
    results = json.loads((readme_path.parent / "results" / "retrieval.json").read_text())
    assert results["build"]["pages"] >= len(list(docs.rglob("*.rst.txt")))
    assert results["questions"] == 1
    assert results["bm25"]["recall_at_1"] == 1.0
    assert "## Retrieval" in readme_path.read_text()
