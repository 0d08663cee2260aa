"""Smoke test of bench.users' report: a results file of its shape becomes the README section
and the summary's rows (the measurement itself needs the corpora and the model)."""

from __future__ import annotations

from pathlib import Path

from bench.summary import users_rows
from bench.users import MAIN_ROWS, readme_section


def figures(at1: float, at5: float) -> dict[str, float]:
    return {"at1": at1, "at5": at5}


def results() -> dict:
    recall = {method: figures(0.5, 0.75) for method in MAIN_ROWS}
    recall["score fusion, BM25 0.3"] = figures(0.25, 0.5)
    found = {
        "questions": 4,
        "recall": recall,
        "latency_p50_ms": {"BM25": 1.0, "hybrid (runner)": 12.0, "anchor": 40.0},
        "gold_among_sources": {"keyword": 0.5, "hybrid": 0.75},
    }
    build = {
        "pages": 10,
        "open_seconds": 0.01,
        "vectors_mb": 0.1,
        "bm25_mb": 0.1,
        "embedded": 10,
        "embed_seconds": 2.0,
        "pages_per_second": 5.0,
    }
    return {
        "date": "2026-12-01",
        "machine": {"cpus": 2},
        "model": "all-MiniLM-L6-v2",
        "corpora": {
            "pydocs": {
                "build": build,
                "anchor": {"build_seconds": 1.0, "size_mb": 0.2, "open_seconds": 0.1},
                "sets": {"pydocs-users": found, "pydocs-faq-headings": found},
            },
            "pgdocs": {"skipped": "no manual"},
            "perldocs": {
                "date": "2026-12-02",
                "held_out": True,
                "build": build,
                "anchor": {"build_seconds": 1.0, "size_mb": 0.2, "open_seconds": 0.1},
                "sets": {"perlfaq-users": found},
            },
        },
    }


def test_the_section_has_a_table_per_set_and_says_what_was_skipped() -> None:
    text = readme_section(results())
    assert "*pydocs-users* (4 questions)" in text and "*pydocs-faq-headings*" in text
    assert "| hybrid (runner) | 0.500 | 0.750 | 0.750 | 12.0 ms |" in text
    assert "| score fusion, BM25 0.3 | 0.250 | 0.500 |" in text
    assert "**pgdocs**: skipped (no manual)." in text


def test_the_summary_holds_each_set_to_its_target() -> None:
    rows = {row[0]: row for row in users_rows(results())}
    assert rows["pydocs-users: gold @5, hybrid"][3] == "≥ 0.80"
    assert rows["pydocs-faq-headings: gold first, hybrid"][1] == "0.500"


def test_a_held_out_corpus_is_labelled_with_the_date_it_was_measured() -> None:
    text = readme_section(results())
    assert "**perldocs** (the held-out corpus, never used to tune runner" in text
    assert "measured 2026-12-02; 10 pages" in text
    assert "**pydocs** (10 pages)" in text
    rows = {row[0]: row for row in users_rows(results())}
    assert rows["perlfaq-users (held-out corpus): gold @5, hybrid"][1] == "0.750"
    assert "pydocs-users: gold @5, hybrid" in rows


def test_a_corpus_not_named_keeps_the_figures_of_the_last_run(readme_path: Path) -> None:
    from bench.readme import write_results
    from bench.users import per_corpus

    write_results("users", {"corpora": {"pydocs": {"kept": True}, "pgdocs": {"kept": True}}})
    corpora = per_corpus("users", lambda corpus: {"measured": corpus}, ["pgdocs"])
    assert corpora == {"pydocs": {"kept": True}, "pgdocs": {"measured": "pgdocs"}}


def test_with_no_corpus_named_every_corpus_is_measured(readme_path: Path) -> None:
    from bench.users import per_corpus
    from bench.wording import SETS

    corpora = per_corpus("users", lambda corpus: {"measured": corpus}, None)
    assert list(corpora) == list(dict.fromkeys(SETS.values()))
