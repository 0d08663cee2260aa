"""bench.reach: where a search puts the gold section, and the README section it writes (the
measurement itself needs the corpora and the model)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import bench.reach
from bench.reach import DEPTHS, first_gold, measure_set, readme_section, shares
from bench.wording import read_set


def test_the_first_gold_place_counts_from_one() -> None:
    assert first_gold([7, 3, 9], {9, 3}) == 2


def test_a_ranking_without_gold_has_no_place() -> None:
    assert first_gold([7, 3], {9}) is None


def test_a_share_counts_the_questions_whose_gold_stands_at_or_before_each_depth() -> None:
    assert shares([1, 6, 20, None], (5, 20)) == {"5": 0.25, "20": 0.75}


class FakeIndex:
    """Three pages; the keyword search puts the gold page third, the others first."""

    def __init__(self) -> None:
        self._pages = [
            SimpleNamespace(node_id=f"p{row}", document="a.html", heading=heading)
            for row, heading in enumerate(["Other", "Another", "Partial Indexes"])
        ]
        self.calls: list[tuple[int, str, bool]] = []

    def pages(self) -> list[Any]:
        return self._pages

    def search(self, query: str, top_k: int, *, mode: str, rerank: bool = True) -> list[Any]:
        self.calls.append((top_k, mode, rerank))
        order = [0, 1, 2] if mode == "keyword" else [2, 0, 1]
        return [SimpleNamespace(page=self._pages[row]) for row in order][:top_k]


def test_a_set_is_measured_unreranked_at_every_depth_beside_the_reranked_top_five(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "tiny.csv").write_text(
        "id,question,sources,tags\nq1,a btree over some rows,a.html#Partial Indexes,\n",
        encoding="utf-8",
    )
    monkeypatch.setattr(bench.reach, "read_set", lambda name: read_set(name, tmp_path))
    index = FakeIndex()
    found = measure_set("tiny", index, index.pages())
    assert found["within"]["BM25"] == {str(depth): 1.0 if depth >= 3 else 0.0 for depth in DEPTHS}
    assert found["within"]["hybrid"]["5"] == 1.0
    assert found["reranked_hybrid_at5"] == 1.0
    assert (max(DEPTHS), "hybrid", False) in index.calls and (5, "hybrid", True) in index.calls


def test_the_readme_section_gives_each_search_a_row_and_names_the_held_out_corpus() -> None:
    within = {str(depth): 0.5 for depth in DEPTHS}
    results = {
        "date": "2026-12-01",
        "machine": {"cpus": 2},
        "depths": list(DEPTHS),
        "corpora": {
            "perldocs": {
                "held_out": True,
                "sets": {
                    "perlfaq-users": {
                        "questions": 4,
                        "within": {"BM25": within, "hybrid": within},
                        "reranked_hybrid_at5": 0.75,
                    }
                },
            },
            "pgdocs": {"skipped": "no network"},
        },
    }
    section = readme_section(results)
    assert "`perlfaq-users` (held out) (4 q.) | BM25 | 0.500" in section
    assert "| hybrid, reranked (runner) | 0.750 |  |  |  |" in section
    assert "**pgdocs**: skipped (no network)." in section
