"""bench.vector_search: end to end at tiny sizes (random page vectors written, opened by a
fresh process and searched, the results and the README section written), and its hybrid
queries on real corpora (each question timed, with the corpus's rerank and without, every
label's figures in the section)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from bench import readme, vector_search


class Corpus:
    """A corpus that records the searches it is asked for."""

    def __init__(self) -> None:
        self.searches: list[tuple[str, bool]] = []

    def __len__(self) -> int:
        return 12

    def search(self, query: str, top_k: int, *, mode: str, rerank: bool = True) -> list[Any]:
        assert mode == "hybrid" and top_k == 5
        self.searches.append((query, rerank))
        return []


def test_every_question_is_searched_with_and_without_the_rerank() -> None:
    corpus = Corpus()
    questions = [f"question {number}" for number in range(4)]
    figures = vector_search.query_times(corpus, questions)
    assert figures["pages"] == 12
    assert sorted(corpus.searches[1:]) == sorted(
        [(question, rerank) for question in questions for rerank in (True, False)]
    )
    assert figures["hybrid, rerank"]["queries"] == 4


def test_the_section_shows_each_label_corpus_and_search() -> None:
    found = {"queries": 4, "p50_ms": 12.5, "p95_ms": 30.0}
    run = {
        "date": "2026-12-03",
        "commit": "abc1234",
        "machine": {"load_average_1min": 3.0},
        "corpora": {
            "support handbook": {
                "pages": 560,
                "first_query_ms": 900.0,
                "hybrid, rerank": found,
                "hybrid, no rerank": found,
            }
        },
    }
    text = vector_search.queries_section(
        {"queries": {"before": run, "after": run}, "queries_target_ms": 100}
    )
    assert text.count("support handbook (560 pages, 4 questions)") == 4
    assert "12.5 / 30.0 ms" in text and "≤ 100 ms" in " ".join(text.split())


def test_the_benchmark_runs_at_tiny_sizes(readme_path: Path) -> None:
    vector_search.main(["--sizes", "60,120"])
    results = json.loads((readme_path.parent / "results" / "vector_search.json").read_text())
    assert list(results["sizes"]) == ["60", "120"]
    assert all(figures["search_p50_ms"] >= 0 for figures in results["sizes"].values())
    assert "| 120 pages |" in readme_path.read_text()


@pytest.mark.usefixtures("embed_model")
def test_the_queries_run_on_a_tiny_handbook(
    readme_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--queries LABEL` whole, on the minimal example's manual standing in for the support
    handbook (indexed with the model, each question searched): its label's figures are filed
    beside those already there (skipped without the `embed` extra's model)."""
    support = tmp_path / "root" / "pipelines" / "support"
    shutil.copytree(vector_search.ROOT / "pipelines" / "minimal", support / "minimal")
    text = (vector_search.ROOT / "pipelines" / "minimal.yaml").read_text(encoding="utf-8")
    text = text.replace("  manual:\n", "  handbook:\n").replace(
        "corpus: manual", "corpus: handbook"
    )
    (support / "support.yaml").write_text(text, encoding="utf-8")
    (support / "eval").mkdir()
    (support / "eval" / "questions.csv").write_text(
        "id,question\nq1,How do I descale the kettle?\nq2,What does the light mean?\n"
        "q3,How much water does it hold?\n",
        encoding="utf-8",
    )
    monkeypatch.setattr(vector_search, "ROOT", tmp_path / "root")
    monkeypatch.setenv("RUNNER_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("RUNNER_BENCH_USERS_STATE", str(tmp_path / "no-pydocs"))
    before = {"date": "2026-12-01", "commit": "0000000", "machine": {}, "corpora": {}}
    readme.write_results("vector_search", {"queries": {"before": before}})
    vector_search.queries_main("after", "abc1234")
    results = json.loads((readme_path.parent / "results" / "vector_search.json").read_text())
    assert results["queries"]["before"] == before
    run = results["queries"]["after"]
    assert run["commit"] == "abc1234" and list(run["corpora"]) == ["support handbook"]
    figures = run["corpora"]["support handbook"]
    assert figures["hybrid, rerank"]["queries"] == 3 and figures["pages"] >= 3
    assert f"## {vector_search.QUERIES_TITLE}" in readme_path.read_text()
