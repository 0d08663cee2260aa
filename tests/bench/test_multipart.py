"""The multi-part benchmark end to end, on a tiny docs folder at zero latency."""

from __future__ import annotations

import asyncio
from pathlib import Path

from benchkit import QUESTIONS

from bench import multipart, multipart_report
from runner.config import validate_file


def test_the_staged_pipeline_is_valid_without_warnings(docs: Path, tmp_path: Path):
    folder = tmp_path / "staged"
    folder.mkdir()
    report = validate_file(multipart.stage(folder, docs))
    assert report.diagnostics == ()
    assert (folder / "corpus" / "howto" / "faq" / "design.rst.txt").is_symlink()


def test_runner_and_llamaindex_answer_the_same_questions_from_the_same_pages(
    docs: Path, tmp_path: Path
):
    # a latency, however small, so that concurrent calls overlap and count once in the chain
    run = multipart.run(docs, QUESTIONS, latency_s=0.01, repeats=1, folder=tmp_path)
    results = asyncio.run(run)
    rows = results["questions"]
    assert [row["parts"] for row in rows] == [2, 3]
    # runner: one decompose call and one answer, whatever the question
    assert [row["runner"]["by_kind"] for row in rows] == [
        {
            "decompose": {"calls": 1, **_tokens(row["runner"]["by_kind"]["decompose"])},
            "tool": {"calls": 1, **_tokens(row["runner"]["by_kind"]["tool"])},
        }
        for row in rows
    ]
    # LlamaIndex: sub-questions, one answer per part, the synthesis
    assert [row["llamaindex"]["calls"] for row in rows] == [4, 5]
    for row in rows:
        # what runner's retrievals handed the answer (excerpts, each under its page's citation)
        # is never more than the same pages whole
        assert 0 < row["runner"]["page_tokens"] <= row["runner_whole_pages"]["page_tokens"]
        assert row["llamaindex"]["page_tokens"] > 0
        assert row["runner"]["critical_path_calls"] == 2
        assert row["llamaindex"]["critical_path_calls"] == 3
    # the per-part pipeline makes LlamaIndex's calls (4 + 5); in parallel its path is
    # LlamaIndex's too (3 a question), one by one it is 2 + the parts
    per_part = results["per_part"]
    assert per_part["parallel"]["calls"] == per_part["one by one"]["calls"] == 9
    assert per_part["parallel"]["critical_path_calls"] == 3 + 3
    assert per_part["one by one"]["critical_path_calls"] == 4 + 5


def test_the_report_shows_both_systems_and_every_question(docs: Path, tmp_path: Path):
    results = asyncio.run(multipart.run(docs, QUESTIONS, latency_s=0.0, repeats=1, folder=tmp_path))
    results = {"date": "today", "command": "test", "machine": {"cpus": 2}} | results
    text = multipart_report.section(results)
    assert "| LLM calls | 4 | 9 | 4 |" in text
    for question in QUESTIONS:
        assert question in text


# an answer check for each part of benchkit's questions: phrases of its tiny docs
TINY_CHECKS = dict(
    zip(
        QUESTIONS,
        [
            ("loop over the file object", "locale dependent"),
            ("wraps a block", "called once per element", "old comparison function"),
        ],
        strict=True,
    )
)


def test_the_checks_held_are_counted_for_every_system(docs: Path, tmp_path: Path):
    run = multipart.run(
        docs, QUESTIONS, latency_s=0.0, repeats=1, folder=tmp_path, answer_checks=TINY_CHECKS
    )
    results = asyncio.run(run)
    assert [row["checks"] for row in results["questions"]] == [2, 3]
    # one sentence a page: excerpts and whole pages send the same answers
    assert results["checks"]["checks_held"] == {
        "runner": 5,
        "llamaindex": 5,
        "runner_whole_pages": 5,
    }


def test_a_check_is_held_whatever_the_markup_around_it():
    sent = "The :func:`open` default *encoding*\n is ``locale-specific``."
    assert multipart.checks_held(sent, ["default encoding is locale-specific", "utf-8"]) == 1


def _tokens(usage: dict[str, int]) -> dict[str, int]:
    return {key: usage[key] for key in ("prompt_tokens", "completion_tokens")}
