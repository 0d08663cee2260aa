"""A corpus index's pages in SQLite (`pages.sqlite`), read lazily: opening an index reads no
page; a search reads only the pages it returns, neighbour search only the pages it walks to.

A page's row number (`ord`, from 0, in corpus order: documents by path, pages by number) is its
document number in the BM25 index, so a BM25 hit is one primary-key lookup away from its page,
and a page's neighbours are the rows just before and after it in the same document.
"""

from __future__ import annotations

import functools
import json
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from runner.retrieval.pages import Page

PAGES_FILE = "pages.sqlite"
PAGES_KEPT = 1024  # pages a store keeps decoded (a few MB: a page is some 400 words at most)
_COLUMNS = "ord, node_id, document, page, title, heading, path, navigation, text, headings"
Row = tuple[Any, ...]  # a row as sqlite3 returns it: what each column holds


def write_pages(path: Path, pages: Iterable[Page]) -> None:
    """A new page store at `path` (which must not exist yet) with the pages in order."""
    db = sqlite3.connect(path)
    try:
        db.execute(
            "CREATE TABLE pages (ord INTEGER PRIMARY KEY, node_id TEXT NOT NULL UNIQUE, "
            "document TEXT NOT NULL, page INTEGER NOT NULL, title TEXT NOT NULL, "
            "heading TEXT NOT NULL, path TEXT NOT NULL, navigation INTEGER NOT NULL, "
            "text TEXT NOT NULL, headings TEXT NOT NULL)"
        )
        # the counts a search needs at once, kept beside the pages: counting them is a scan of
        # every row (a second and more of a cold disk at 100,000 pages)
        db.execute("CREATE TABLE counts (name TEXT PRIMARY KEY, value INTEGER NOT NULL)")
        db.executemany(
            f"INSERT INTO pages ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                (
                    number,
                    page.node_id,
                    page.document,
                    page.page,
                    page.title,
                    page.heading,
                    json.dumps(list(page.path), ensure_ascii=False),
                    int(page.navigation),
                    page.text,
                    json.dumps(list(page.headings), ensure_ascii=False),
                )
                for number, page in enumerate(pages)
            ),
        )
        db.execute(
            "INSERT INTO counts SELECT 'pages', count(*) FROM pages "
            "UNION ALL SELECT 'navigation', count(*) FROM pages WHERE navigation = 1"
        )
        db.commit()
    finally:
        db.close()


def _page(row: Row) -> Page:
    _, node_id, document, number, title, heading, path, navigation, text, headings = row
    return Page(
        node_id=str(node_id),
        document=str(document),
        page=int(number),
        title=str(title),
        heading=str(heading),
        text=str(text),
        path=_strings(str(path)),
        navigation=bool(navigation),
        headings=_strings(str(headings)),
    )


@functools.lru_cache(maxsize=4096)
def _strings(stored: str) -> tuple[str, ...]:
    """A stored JSON list of strings as a tuple. Kept by its text: a search reads some 80 pages
    to keep 4 (two lists each), and a document's pages repeat the same heading paths."""
    return tuple(json.loads(stored))


class PageStore:
    """Read-only access to a page store; safe to share between threads."""

    def __init__(self, path: Path) -> None:
        self._db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
        self._lock = threading.Lock()
        self._count: int | None = None
        self._navigation: int | None = None
        self._kept: OrderedDict[int, Page] = OrderedDict()  # by_ords' last pages, by row
        self._keeping = threading.Lock()

    def close(self) -> None:
        self._db.close()

    def _rows(self, sql: str, parameters: Sequence[object] = ()) -> list[Row]:
        with self._lock:
            return self._db.execute(sql, parameters).fetchall()

    def _counted(self, name: str, count: str) -> int:
        """A count kept at build time; counted now in a store written without them."""
        try:
            rows = self._rows("SELECT value FROM counts WHERE name = ?", (name,))
        except sqlite3.OperationalError:  # no such table
            rows = self._rows(count)
        return int(rows[0][0])

    def __len__(self) -> int:
        if self._count is None:
            self._count = self._counted("pages", "SELECT count(*) FROM pages")
        return self._count

    def navigation_count(self) -> int:
        if self._navigation is None:
            count = "SELECT count(*) FROM pages WHERE navigation = 1"
            self._navigation = self._counted("navigation", count)
        return self._navigation

    def all(self) -> list[Page]:
        return [_page(row) for row in self._rows(f"SELECT {_COLUMNS} FROM pages ORDER BY ord")]

    def by_ords(self, ords: Sequence[int]) -> list[Page]:
        """The pages of these row numbers, in the order given (unknown ones left out). The
        last PAGES_KEPT pages read are kept: a search reads some 80 pages to keep 4, and the
        next search of the same corpus reads many of them again."""
        if not ords:
            return []
        with self._keeping:
            found = {n: page for n in ords if (page := self._kept.get(n)) is not None}
            for number in found:
                self._kept.move_to_end(number)
        missing = list(dict.fromkeys(number for number in ords if number not in found))
        if missing:
            marks = ", ".join("?" * len(missing))
            rows = self._rows(f"SELECT {_COLUMNS} FROM pages WHERE ord IN ({marks})", missing)
            read = {int(row[0]): _page(row) for row in rows}
            found.update(read)
            with self._keeping:
                self._kept.update(read)
                while len(self._kept) > PAGES_KEPT:
                    self._kept.popitem(last=False)
        return [found[number] for number in ords if number in found]

    def by_id(self, node_id: str) -> tuple[int, Page] | None:
        rows = self._rows(f"SELECT {_COLUMNS} FROM pages WHERE node_id = ?", (node_id,))
        return (int(rows[0][0]), _page(rows[0])) if rows else None

    def around(self, number: int, document: str, window: int) -> tuple[list[Page], list[Page]]:
        """The pages up to `window` rows before and after row `number` that are of the same
        document (a document's pages are consecutive rows), each side nearest first."""
        rows = self._rows(
            f"SELECT {_COLUMNS} FROM pages WHERE ord BETWEEN ? AND ? AND document = ? ORDER BY ord",
            (number - window, number + window, document),
        )
        before = [_page(row) for row in rows if int(row[0]) < number]
        after = [_page(row) for row in rows if int(row[0]) > number]
        return list(reversed(before)), after
