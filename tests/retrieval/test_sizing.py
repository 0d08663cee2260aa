"""Sizing a search's `max_brute_force_page_count` from sample questions: `runner index --stats`
(issue 22, item 2)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from runner.cli import main
from runner.config import load_pipeline
from runner.retrieval import open_corpus
from runner.retrieval.sizing import (
    Matched,
    SearchSizing,
    questions_from_file,
    questions_from_tests,
    sizings,
)
from tests.examples_kit import copy_example

SUPPORT = Path(__file__).resolve().parents[2] / "pipelines" / "support"


@pytest.fixture(scope="module")
def support(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("sizing") / "support"
    copy_example("support", target)
    return target / "support.yaml"


def sizing(*counts: int, pages: int = 1000, limit: int | None = 40) -> SearchSizing:
    matched = tuple(Matched(f"q{n}", count) for n, count in enumerate(counts))
    return SearchSizing("docs_search", "docs", pages, 4, limit, matched)


def test_the_proposal_lets_nine_questions_in_ten_be_read() -> None:
    measured = sizing(100, 120, 150, 180, 200, 240, 260, 300, 320, 900)
    assert measured.proposal == 320
    assert measured.read_under(measured.proposal) == 9


def test_the_proposal_is_rounded_up_to_two_digits() -> None:
    assert sizing(1234, pages=5000).proposal == 1300


def test_the_proposal_stays_below_the_corpus_so_the_full_scan_stays_off() -> None:
    assert sizing(990, 995, 999, pages=1000).proposal == 999


def test_the_proposal_is_never_below_top_k() -> None:
    assert sizing(1, 2, 3).proposal == 4


def test_questions_that_match_nothing_propose_nothing() -> None:
    measured = sizing(0, 0)
    assert measured.proposal is None
    assert "No question matches a page" in "\n".join(measured.lines())


def test_the_report_says_how_many_questions_the_current_limit_lets_be_read() -> None:
    lines = sizing(100, 30, 200, limit=40).lines()
    assert "  With max_brute_force_page_count 40, 1 of 3 would have their top 4 pages read;" in (
        "\n".join(lines)
    )


def test_sample_questions_are_the_messages_of_the_pipelines_tests(support: Path) -> None:
    questions = questions_from_tests(load_pipeline(support))
    assert "What warranty do I get on my washing machine?" in questions
    assert len(questions) == len(set(questions))


def test_a_questions_file_has_one_a_line_and_comments(tmp_path: Path) -> None:
    path = tmp_path / "q.txt"
    path.write_text("# ours\nHow do I descale it?\n\n  Is the KD-450 quiet?\n", encoding="utf-8")
    assert questions_from_file(path) == ["How do I descale it?", "Is the KD-450 quiet?"]


def test_the_support_examples_limit_reads_hardly_any_of_its_own_questions(support: Path) -> None:
    pipeline = load_pipeline(support)
    (measured,) = sizings(
        pipeline, questions_from_tests(pipeline), lambda name: open_corpus(pipeline, name)
    )
    matching = sum(1 for m in measured.matched if m.pages)
    assert (measured.tool, measured.limit) == ("handbook_search", 40)
    assert measured.read_under(40) <= matching // 10
    proposal = measured.proposal
    assert proposal is not None and 40 < proposal < measured.corpus_pages
    assert measured.read_under(proposal) >= 0.9 * matching


def test_runner_index_questions_prints_the_counts_and_the_proposal(
    support: Path, tmp_path: Path
) -> None:
    questions = tmp_path / "q.txt"
    questions.write_text("How do I descale the KC-300 coffee machine?\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["index", str(support), "--questions", str(questions)])
    assert result.exit_code == 0, result.output
    assert "sample questions: 1, from " in result.output
    assert "How do I descale the KC-300 coffee machine?" in result.output
    assert "Proposed: max_brute_force_page_count: " in result.output


def test_runner_index_stats_without_a_search_tool_says_so(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# Kettles\n\nDescale monthly.\n", encoding="utf-8")
    path = tmp_path / "p.yaml"
    path.write_text(
        "version: 1\ndomain: d\ncorpora: {docs: {path: docs}}\n"
        "tools:\n  - {name: rag, kind: retrieve, corpus: docs, description: Pages.}\n",
        encoding="utf-8",
    )
    result = CliRunner().invoke(main, ["index", str(path), "--stats"])
    assert result.exit_code == 0, result.output
    assert "no keyword search tool" in result.output
