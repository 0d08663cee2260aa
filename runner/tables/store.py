"""Lookup tables' key indexes on disk: built once per table version, opened by every later run.

Indexing a table in memory costs every process the whole table: a million-row CSV is ~5 s and
~1 GB a run. The store costs that once. It is one SQLite file per lookup table and key columns,
`<state folder>/tables/<table stem>-<digest>.sqlite` (beside the corpora's `indexes/`), holding
the rows, every key by its words (an indexed column) and by its compact spelling, and a manifest
of what it was built from. A later run opens it and reads the keys and rows a question names,
never the whole table; an extraction prompt's listing of known values comes from it too.

Staleness is decided as for the corpora (runner.documents.fingerprints): the table's size and mtime
first, its sha256 when they differ (a `touch` rebuilds nothing); the key columns, the store's
format and the key normalisation (runner.tables.index.NORMALISATION) are part of the key. A
rebuild writes a temporary file and renames it over the old one, so a reader never sees half a
store. A store that cannot be written (a read-only folder) leaves the run to the index in memory,
with one warning.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, overload

from runner.documents.fingerprints import Change, content_sha256, file_change
from runner.documents.table_files import Row, TableVersion, shared_rows, table_version
from runner.tables.index import (
    NORMALISATION,
    Hit,
    KeyIndex,
    KeyMatcher,
    compact_spelling,
    key_index,
)
from runner.tables.lookup_tables import table_path
from runner.tables.rows import decode_row, encode_row

if TYPE_CHECKING:
    from runner.config.model import LookupOptions, Pipeline

STORE_FORMAT = 1
TABLES_FOLDER = "tables"
_CHUNK = 500  # values per `IN (…)`: well inside SQLite's limit on parameters
_SAVE_STEP = 50_000  # rows between two progress reports while saving
_KEPT_KEYS = 1_000  # a table of at most this many keys keeps their list once read (StoredKeys)

# progress(stage, done, total), as runner.retrieval.index reports a corpus: "read" (the table),
# "index" (its keys), "save" (rows written). Only a build reports.
ProgressCallback = Callable[[str, int, int], None]

log = logging.getLogger("runner.documents.table_files")
_warned: set[Path] = set()


@dataclass(frozen=True)
class StoreStatus:
    """What opening a store did: `rebuilt` and why, or found it up to date."""

    path: Path
    rebuilt: bool
    reason: str
    rows: int
    keys: int
    seconds: float


def store_path(pipeline: Pipeline, options: LookupOptions) -> Path:
    """Where the store of a lookup tool's table and key columns lives. Named by the table as the
    pipeline writes it, so that moving the pipeline's folder keeps its stores."""
    return _store_path(pipeline.state_folder, options.table, options.matched_columns)


@lru_cache(maxsize=256)  # asked on every extraction of a served round: ~0.1 ms each time
def _store_path(state_folder: Path, table: Path, columns: tuple[str, ...]) -> Path:
    written = Path(os.path.normpath(table)).as_posix()
    identity = json.dumps([written, list(columns)])
    digest = hashlib.sha256(identity.encode("utf-8")).hexdigest()[:16]
    return state_folder / TABLES_FOLDER / f"{table.stem}-{digest}.sqlite"


def table_keys(pipeline: Pipeline, options: LookupOptions) -> KeyMatcher:
    """The key index of a lookup tool's table: its store, opened (and built first when missing
    or stale); the index in memory when the store cannot be written. Raises TableError."""
    version = table_version(table_path(pipeline, options.table))
    return _opened(store_path(pipeline, options), version, options.matched_columns)


def index_table(
    pipeline: Pipeline,
    options: LookupOptions,
    *,
    force: bool = False,
    progress: ProgressCallback | None = None,
) -> StoreStatus:
    """Build a lookup tool's store unless it is up to date (`runner index`). Raises TableError,
    and OSError or sqlite3.Error when the store cannot be written."""
    version = table_version(table_path(pipeline, options.table))
    path = store_path(pipeline, options)
    started = time.perf_counter()
    manifest = _read_manifest(path)
    reason = "forced" if force else _stale_reason(path, version, options.matched_columns, manifest)
    if reason is None and manifest is not None:
        seconds = time.perf_counter() - started
        return StoreStatus(path, False, "up to date", manifest["rows"], manifest["keys"], seconds)
    manifest = _build(path, version, options.matched_columns, progress)
    seconds = time.perf_counter() - started
    return StoreStatus(path, True, reason or "missing", manifest["rows"], manifest["keys"], seconds)


@lru_cache(maxsize=32)
def _opened(path: Path, version: TableVersion, columns: tuple[str, ...]) -> KeyMatcher:
    try:
        manifest = _read_manifest(path)
        if _stale_reason(path, version, columns, manifest) is not None or manifest is None:
            manifest = _build(path, version, columns, None)
        return StoredIndex(path, manifest)
    except (OSError, sqlite3.Error, UnicodeError) as error:
        _warn_once(path, version[0], error)
        return key_index(version[0], columns)


def _warn_once(path: Path, table: Path, error: Exception) -> None:
    if path in _warned:
        return
    _warned.add(path)
    cause = getattr(error, "strerror", None) or str(error) or type(error).__name__
    log.warning(
        "warning: the key index of table %s cannot be stored at %s (%s); every run indexes the "
        "table in memory instead, which costs a large table seconds: make that folder writable, "
        "or point the pipeline's `state_dir:` at one that is",
        table,
        path,
        cause,
    )


# --- staleness -----------------------------------------------------------------------------


def _settings(columns: Sequence[str]) -> dict[str, Any]:
    return {"format": STORE_FORMAT, "normalisation": NORMALISATION, "columns": list(columns)}


def _files(version: TableVersion) -> dict[str, list[int]]:
    table, mtime_ns, size = version
    return {table.name: [size, mtime_ns]}


def _connect(path: Path) -> sqlite3.Connection:
    """Read-only: opening a store never writes (its folder may be read-only)."""
    return sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, check_same_thread=False)


def _read_manifest(path: Path) -> dict[str, Any] | None:
    """The manifest of the store at `path`; None when there is none or it is not a store."""
    if not path.is_file():
        return None
    try:
        with closing(_connect(path)) as db:
            (text,) = db.execute("SELECT manifest FROM meta").fetchone()
        manifest = json.loads(text)
    except (sqlite3.Error, ValueError, TypeError):  # half a file, another file, an old format
        return None
    return manifest if isinstance(manifest, dict) else None


def _stale_reason(
    path: Path, version: TableVersion, columns: Sequence[str], manifest: dict[str, Any] | None
) -> str | None:
    """None when the store is up to date; otherwise why it is not."""
    if manifest is None:
        return "missing"
    if manifest.get("settings") != _settings(columns):
        return "stale (key columns or format changed)"
    table = version[0]
    files = _files(version)
    change = file_change(manifest, files, lambda: content_sha256(table.parent, [table.name]))
    if change is Change.CONTENT:
        return "stale (table changed)"
    if change is Change.TOUCHED:
        _record_files(path, {**manifest, "files": files})
    return None


def _record_files(path: Path, manifest: dict[str, Any]) -> None:
    """Remember a touched table's new size and mtime for the next fast check. Best effort: a
    store that cannot be written is still right, and the next run hashes the table again."""
    try:
        with closing(sqlite3.connect(path)) as db, db:
            db.execute("UPDATE meta SET manifest = ?", (json.dumps(manifest),))
    except sqlite3.Error:
        pass


# --- building ------------------------------------------------------------------------------


def _build(
    path: Path, version: TableVersion, columns: Sequence[str], progress: ProgressCallback | None
) -> dict[str, Any]:
    """Read the table, index it in memory (the very index runner.tables.index builds), write
    both into a new store and swap it in. Returns the new store's manifest."""
    started = time.perf_counter()
    report = progress or (lambda stage, done, total: None)
    table = version[0]
    path.parent.mkdir(parents=True, exist_ok=True)  # before the work, when it is in the way
    report("read", 0, 1)  # a build starts: callers may say so
    content = content_sha256(table.parent, [table.name])
    rows = shared_rows(version)
    report("read", 1, 1)
    report("index", 0, 1)
    # the cached index in memory: where the store then cannot be written, the run falls back
    # on this very one instead of indexing the table twice
    index = key_index(table, columns)
    report("index", 1, 1)
    building = path.with_name(f".{path.name}.building-{os.getpid()}-{threading.get_ident()}")
    building.unlink(missing_ok=True)
    try:
        with closing(sqlite3.connect(building)) as db:
            _write(db, index, report)
            manifest = {
                "table": str(table),
                "settings": _settings(columns),
                "files": _files(version),
                "content_sha256": content,
                "rows": len(rows),
                "keys": len(index.keys),
                "table_columns": list(index.table_columns),
                "word_counts": list(index.word_counts),
                "build_seconds": round(time.perf_counter() - started, 3),
            }
            db.execute("INSERT INTO meta VALUES (?)", (json.dumps(manifest),))
            db.commit()
        os.replace(building, path)
    finally:
        building.unlink(missing_ok=True)
    return manifest


def _write(db: sqlite3.Connection, index: KeyIndex, report: ProgressCallback) -> None:
    db.executescript(
        """
        PRAGMA journal_mode = OFF;  -- a new file, renamed into place only when complete
        PRAGMA synchronous = OFF;
        CREATE TABLE meta (manifest TEXT NOT NULL);
        CREATE TABLE rows (number INTEGER PRIMARY KEY, cells TEXT NOT NULL);
        CREATE TABLE keys (
            place INTEGER PRIMARY KEY,  -- the key's place in table order
            words TEXT NOT NULL,        -- its words, case-folded, joined by spaces
            spelling TEXT NOT NULL,     -- as the table writes it
            compact TEXT,               -- run together, when it has more than letters and digits
            rows TEXT NOT NULL          -- its rows' numbers, comma-separated
        );
        """
    )
    header, total = index.table_columns, len(index.rows)

    def encoded() -> Iterator[tuple[int, str]]:
        for number, row in enumerate(index.rows):
            if number % _SAVE_STEP == 0:
                report("save", number, total)
            yield number, encode_row(row, header)

    db.executemany("INSERT INTO rows VALUES (?, ?)", encoded())
    db.executemany(
        "INSERT INTO keys VALUES (?, ?, ?, ?, ?)",
        (
            (order, words, index.keys[order], compact_spelling(words), _numbers(index, order))
            for words, order in index.order.items()
        ),
    )
    db.execute("CREATE UNIQUE INDEX keys_by_words ON keys (words)")
    db.execute("CREATE INDEX keys_by_compact ON keys (compact) WHERE compact IS NOT NULL")
    report("save", total, total)


def _numbers(index: KeyIndex, order: int) -> str:
    return ",".join(map(str, index.row_numbers(order)))


# --- reading -------------------------------------------------------------------------------


class StoredIndex(KeyMatcher):
    """A table's key index on disk: each look-up an indexed query for the words asked about."""

    def __init__(self, path: Path, manifest: dict[str, Any]) -> None:
        self.path = path
        self.columns = tuple(manifest["settings"]["columns"])
        self.table_columns = tuple(manifest["table_columns"])
        self.word_counts = list(manifest["word_counts"])
        self.keys = StoredKeys(self, int(manifest["keys"]))
        self._db = _connect(path)
        self._lock = threading.Lock()  # one connection, shared by a service's threads

    def query(self, sql: str, values: Iterable[Any]) -> list[tuple[Any, ...]]:
        """`sql` with `{}` for the placeholders, run over `values` a chunk at a time."""
        values = list(values)
        found: list[tuple[Any, ...]] = []
        with self._lock:
            for start in range(0, len(values), _CHUNK):
                chunk = values[start : start + _CHUNK]
                marks = ", ".join("?" * len(chunk))
                found += self._db.execute(sql.format(marks), chunk).fetchall()
        return found

    def spellings(self) -> list[str]:
        """Every key as written, in table order."""
        with self._lock:
            found = self._db.execute("SELECT spelling FROM keys ORDER BY place").fetchall()
        return [str(spelling) for (spelling,) in found]

    def _hits(self, joined: Iterable[str]) -> dict[str, Hit]:
        sql = "SELECT words, place, spelling, rows FROM keys WHERE words IN ({})"
        return {words: _hit(*rest) for words, *rest in self.query(sql, set(joined))}

    def _compact_hits(self, runs: Iterable[str]) -> dict[str, Hit]:
        sql = "SELECT compact, place, spelling, rows FROM keys WHERE compact IN ({}) ORDER BY place"
        hits: dict[str, Hit] = {}
        for compact, *rest in self.query(sql, set(runs)):
            hits.setdefault(compact, _hit(*rest))  # the first key in table order
        return hits

    def _rows(self, numbers: Sequence[int]) -> list[Row]:
        sql = "SELECT number, cells FROM rows WHERE number IN ({})"
        cells = dict(self.query(sql, numbers))
        return [decode_row(cells[number], self.table_columns) for number in numbers]


def _hit(place: int, spelling: str, rows: str) -> Hit:
    return Hit(place, spelling, tuple(int(number) for number in rows.split(",")))


class StoredKeys(Sequence[str]):
    """A store's keys in table order, read from it when iterated: `len` reads nothing, so a
    prompt can ask whether a table is short enough to list without loading it."""

    def __init__(self, index: StoredIndex, count: int) -> None:
        self._index, self._count = index, count
        self._listed: list[str] | None = None  # a short table's keys, once read

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, item: int) -> str: ...
    @overload
    def __getitem__(self, item: slice) -> list[str]: ...
    def __getitem__(self, item: int | slice) -> str | list[str]:
        if isinstance(item, slice):
            return list(self)[item]
        place = item + self._count if item < 0 else item
        if not 0 <= place < self._count:
            raise IndexError(item)
        ((spelling,),) = self._index.query("SELECT spelling FROM keys WHERE place IN ({})", [place])
        return str(spelling)

    def __iter__(self) -> Iterator[str]:
        if self._count > _KEPT_KEYS:
            return iter(self._index.spellings())
        # a short table's keys are listed in every extraction's prompt (known_values), each
        # time read again; a long table's, kept, would hold its whole key column in memory
        if self._listed is None:
            self._listed = self._index.spellings()
        return iter(self._listed)
