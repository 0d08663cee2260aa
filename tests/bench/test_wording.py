"""Smoke tests of bench.wording: how the question sets are read and their gold pages found."""

from __future__ import annotations

from pathlib import Path

from bench.wording import Recall, gold_rows, heading_key, read_set
from runner.retrieval.pages import Page


def test_a_question_s_sources_become_document_and_heading_pairs(tmp_path: Path) -> None:
    (tmp_path / "s.csv").write_text(
        'id,question,sources,tags\nq1,"wipe it, quick",a.html#Clearing|b.html#Wiping Out,x\n',
        encoding="utf-8",
    )
    [question] = read_set("s", tmp_path)
    assert question.golds == {("a.html", "Clearing"), ("b.html", "Wiping Out")}


def test_an_html_heading_is_compared_without_its_section_number() -> None:
    assert heading_key("11.2. Index Types") == "Index Types"
    assert heading_key("Chapter 26. Backup and  Restore") == "Backup and Restore"
    assert heading_key("CREATE INDEX") == "CREATE INDEX"


def test_every_page_of_a_gold_section_is_gold(tmp_path: Path) -> None:
    (tmp_path / "s.csv").write_text(
        "id,question,sources,tags\nq1,q,a.html#Index Types,x\n", encoding="utf-8"
    )
    [question] = read_set("s", tmp_path)
    pages = [
        Page("a.html#1", "a.html", 1, "A", "11.2. Index Types", "one"),
        Page("a.html#2", "a.html", 2, "A", "11.2. Index Types", "two"),
        Page("a.html#3", "a.html", 3, "A", "11.3. Other", "three"),
    ]
    assert gold_rows(pages, question) == {0, 1}


def test_recall_counts_first_and_top_five() -> None:
    recall = Recall()
    recall.add([3, 1], {3})
    recall.add([0, 1, 2, 4, 5, 9], {9})
    recall.add([7], {1})
    assert recall.figures() == {"at1": 0.333, "at5": 0.333}
