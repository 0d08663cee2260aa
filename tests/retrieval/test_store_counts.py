"""The page store keeps its counts (runner/retrieval/store.py): a search asks how many
navigation pages there are before its first query, and counting them is a scan of every row."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from runner.retrieval.pages import Page
from runner.retrieval.store import PageStore, write_pages


def page(number: int, navigation: bool) -> Page:
    return Page(
        node_id=f"n{number}",
        document="a.md",
        page=number,
        title="A",
        heading="Heading",
        text="text",
        path=("A",),
        navigation=navigation,
    )


def test_the_counts_are_read_from_the_store_not_counted(tmp_path: Path) -> None:
    path = tmp_path / "pages.sqlite"
    write_pages(path, [page(0, True), page(1, False), page(2, False)])
    with sqlite3.connect(path) as db:  # the counts, not the rows, answer
        db.execute("DELETE FROM pages WHERE ord = 2")
    store = PageStore(path)
    assert (len(store), store.navigation_count()) == (3, 1)


def test_a_store_written_without_counts_is_counted(tmp_path: Path) -> None:
    path = tmp_path / "pages.sqlite"
    write_pages(path, [page(0, True), page(1, False)])
    with sqlite3.connect(path) as db:
        db.execute("DROP TABLE counts")
    store = PageStore(path)
    assert (len(store), store.navigation_count()) == (2, 1)
