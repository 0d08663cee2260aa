"""The page store keeps the last pages a search read (runner/retrieval/store.py `by_ords`): a
search reads some 80 pages to keep 4, and the next search reads many of them again."""

from __future__ import annotations

from pathlib import Path

import pytest

from runner.retrieval import store as module
from runner.retrieval.pages import Page
from runner.retrieval.store import PageStore, write_pages


def page(number: int) -> Page:
    return Page(
        node_id=f"n{number}",
        document="a.md",
        page=number + 1,
        title="A",
        heading=f"Heading {number % 3}",
        text=f"text of page {number}",
        path=("A", f"Part {number % 2}"),
        headings=(f"Heading {number % 3}",) if number % 4 == 0 else (),
    )


PAGES = [page(number) for number in range(10)]


@pytest.fixture
def store(tmp_path: Path) -> PageStore:
    path = tmp_path / "pages.sqlite"
    write_pages(path, PAGES)
    return PageStore(path)


def reads(store: PageStore, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The SQL the store runs from now on."""
    ran: list[str] = []
    rows = store._rows
    monkeypatch.setattr(store, "_rows", lambda sql, values=(): ran.append(sql) or rows(sql, values))
    return ran


def test_pages_read_before_come_back_equal_in_the_order_asked(store: PageStore) -> None:
    assert store.by_ords([3, 1, 7]) == [PAGES[3], PAGES[1], PAGES[7]]
    assert store.by_ords([7, 2, 3, 42, 2]) == [PAGES[7], PAGES[2], PAGES[3], PAGES[2]]


def test_a_kept_page_is_not_read_again(store: PageStore, monkeypatch) -> None:
    store.by_ords([3, 1])
    ran = reads(store, monkeypatch)
    assert store.by_ords([1, 3]) == [PAGES[1], PAGES[3]] and ran == []
    store.by_ords([1, 5])
    assert len(ran) == 1


def test_only_the_last_pages_are_kept(store: PageStore, monkeypatch) -> None:
    monkeypatch.setattr(module, "PAGES_KEPT", 2)
    store.by_ords([0, 1])
    store.by_ords([0])  # 0 now the most recent
    store.by_ords([2])  # 1 goes
    assert list(store._kept) == [0, 2]
