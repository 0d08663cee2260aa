"""bench.answers at a tiny size: a two-page manual, two questions in users' words with their
answer checks, asked through `runner eval` in the words shape (the meaning shapes need the
embedding model: tests/embed runs them)."""

from __future__ import annotations

from pathlib import Path

import yaml

from bench import answers

MANUAL = """Queues
======

Take items off the front of a collection with collections.deque: its popleft is fast.

Stacks
======

A list's append and pop work at its end, last in first out.
"""
QUESTIONS = """id,question,sources,answer,tags
t-1,fast way to take items off the front of a collection,manual.rst.txt#Queues,popleft,queues
t-2,add to the end and take back the newest item,manual.rst.txt#Stacks,last in first out,lists
"""


def tiny(tmp_path: Path) -> tuple[Path, Path]:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "manual.rst.txt").write_text(MANUAL, encoding="utf-8")
    questions = tmp_path / "questions"
    questions.mkdir()
    (questions / "pydocs-users.csv").write_text(QUESTIONS, encoding="utf-8")
    return docs, questions


def test_the_words_shape_has_no_deep_fallback_and_no_tool_only_the_fallback_uses(
    tmp_path: Path,
) -> None:
    docs, _ = tiny(tmp_path)
    path = answers.shaped_pipeline(tmp_path / "p", docs, "**/*.rst.txt", "words", embedding=None)
    pipeline = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert "deep_fallback" not in pipeline
    assert [tool["name"] for tool in pipeline["tools"]] == ["docs_rag"]
    assert pipeline["tools"][0]["mode"] == "keyword"


def test_the_meaning_and_deep_shape_keeps_the_fallback_on_hybrid_search(tmp_path: Path) -> None:
    docs, _ = tiny(tmp_path)
    path = answers.shaped_pipeline(tmp_path / "p", docs, "**/*.rst.txt", "meaning + deep")
    pipeline = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert pipeline["deep_fallback"]["coordinator"] == "deep_search"
    assert pipeline["tools"][0]["mode"] == "hybrid"
    assert pipeline["corpora"]["docs"]["embedding"] == {"model": answers.MODEL}


def test_a_set_is_measured_for_sources_and_answer_checks_through_runner_eval(
    tmp_path: Path,
) -> None:
    docs, questions = tiny(tmp_path)
    found = answers.measure_set(
        "pydocs-users",
        tmp_path / "base",
        folder_of=lambda corpus: docs,
        questions=questions,
        shapes=("words",),
        embedding=None,
    )
    words = found["words"]
    assert words["questions"] == 2
    assert words["errors"] == 0
    assert words["sourced"] == 1.0
    assert 0.0 <= words["checks"] <= 1.0


def test_a_corpus_that_cannot_be_fetched_is_skipped_and_says_so(tmp_path: Path) -> None:
    found = answers.measure_set("gitdocs-users", tmp_path, folder_of=lambda corpus: None)
    assert found == {"skipped": "the gitdocs corpus could not be fetched"}


def test_the_readme_section_reads_before_and_now_for_each_shape() -> None:
    figures = {"questions": 2, "sourced": 0.5, "checks": 1.0, "errors": 0, "latency_p50_ms": 3}
    results = {
        "date": "2026-12-03",
        "commit": "abc1234",
        "command": "python -m bench.answers",
        "machine": {"cpus": 2, "load_average_1min": 1.0},
        "model": answers.MODEL,
        "sets": {"pydocs-users": {"words": figures}, "gitdocs-users": {"skipped": "absent"}},
        "before": {
            "commit": "0000000",
            "sets": {"pydocs-users": {"words": {**figures, "sourced": 0.25}}},
        },
    }
    text = answers.readme_section(results)
    assert "| pydocs-users | words | 0.250 → 0.500 | 1.000 → 1.000 | 0 → 0 | 3 |" in text
    assert "| gitdocs-users | — | absent |" in text
    assert "commit 0000000" in text


def test_the_summary_holds_each_set_against_issue_29s_targets_beside_its_before() -> None:
    from bench.summary_quality import answers_rows

    now = {"sourced": 0.72, "checks": 0.41}
    results = {
        "sets": {"gitdocs-users": {"meaning": now}, "perlfaq-users": {"skipped": "absent"}},
        "before": {"sets": {"gitdocs-users": {"meaning": {"sourced": 0.35, "checks": 0.22}}}},
    }
    rows = answers_rows(results)
    assert [row[:4] for row in rows] == [
        [
            "gitdocs-users: gold among sources, meaning (the standard install)",
            "0.720",
            "before 0.350",
            "≥ 0.70",
        ],
        [
            "gitdocs-users: answer checks, meaning (the standard install)",
            "0.410",
            "before 0.220",
            "≥ 0.60",
        ],
    ]
    assert rows[0][4] != rows[1][4]  # one met, one missed
