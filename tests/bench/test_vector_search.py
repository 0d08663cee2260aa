"""bench.vector_search end to end at tiny sizes: random page vectors written, opened by a fresh
process and searched, the results and the README section written."""

from __future__ import annotations

import json
from pathlib import Path

from bench import vector_search


def test_the_benchmark_runs_at_tiny_sizes(readme_path: Path) -> None:
    vector_search.main(["--sizes", "60,120"])
    results = json.loads((readme_path.parent / "results" / "vector_search.json").read_text())
    assert list(results["sizes"]) == ["60", "120"]
    assert all(figures["search_p50_ms"] >= 0 for figures in results["sizes"].values())
    assert "| 120 pages |" in readme_path.read_text()
