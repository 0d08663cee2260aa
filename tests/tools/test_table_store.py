"""A lookup table's key index on disk (runner/tables/store.py): the same answers as the index in
memory, built once per table version, rebuilt when the table changes, never reading the table
once built, and the index in memory (with one warning) where it cannot be written."""

from __future__ import annotations

import csv
import itertools
import json
import logging
import os
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from runner.config.model import LookupOptions, Pipeline, ToolConfig, ToolKind
from runner.documents.table_files import shared_rows, table_version
from runner.llm.known_values import known_values
from runner.tables import index as table_index
from runner.tables import store as table_store
from runner.tables.index import KeyIndex, KeyMatcher
from runner.tables.rows import decode_row, encode_row
from runner.tables.store import StoredIndex, index_table, store_path, table_keys


@pytest.fixture(autouse=True)
def fresh_caches():
    """Each test opens its stores as a new process would."""
    table_store._opened.cache_clear()
    table_index._index.cache_clear()
    table_store._warned.clear()
    yield
    table_store._opened.cache_clear()


def pipeline_with(folder: Path, table: str, columns: tuple[str, ...], **state: Any) -> Pipeline:
    options = LookupOptions(table=Path(table), key=columns[0], key_columns=columns)
    tool = ToolConfig(name="releases", kind=ToolKind.LOOKUP, options=options)
    return Pipeline(domain="distro", tools=(tool,), path=folder / "p.yaml", **state)


def options_of(pipeline: Pipeline) -> LookupOptions:
    options = pipeline.tools[0].options
    assert isinstance(options, LookupOptions)
    return options


def write_csv(path: Path, rows: list[dict[str, str]], header: list[str]) -> None:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, header)
        writer.writeheader()
        writer.writerows(rows)


RELEASES = [
    {"codename": "bookworm", "version": "Debian 12"},
    {"codename": "bullseye", "version": "Debian 11"},
    {"codename": "XR-200", "version": "Debian 12"},
]


def releases(folder: Path, **state: Any) -> Pipeline:
    write_csv(folder / "releases.csv", RELEASES, ["codename", "version"])
    return pipeline_with(folder, "releases.csv", ("codename", "version"), **state)


# --- the same answers -------------------------------------------------------------------------

# keys that share words, or a compact spelling (`xr200`), and keys of several words
WORDS = ["kd", "460", "KD-460", "x", "Pro", "xr 200", "XR-200", "xr.200", "v2.1", "ab's", "café"]
WORDS += ["Debian 12", "debian", "12"]
CELLS = st.one_of(st.sampled_from(WORDS), st.sampled_from(["", " ", "--", "a.b.c"]))
TYPED = st.one_of(
    CELLS,
    st.integers(-5, 5),
    st.booleans(),
    st.none(),
    st.dates(min_value=date(2000, 1, 1), max_value=date(2030, 1, 1)),
    st.lists(CELLS, max_size=2),
    st.dictionaries(st.sampled_from(["~date", "a"]), CELLS, max_size=1),
)
QUESTION = st.lists(st.one_of(st.sampled_from(WORDS), st.sampled_from([",", "the", "xr200", "?"])))


EXAMPLES = itertools.count()


@st.composite
def tables(draw: st.DrawFn) -> tuple[str, list[dict[str, Any]], tuple[str, ...]]:
    form = draw(st.sampled_from(["csv", "json", "yaml"]))
    cells = CELLS if form == "csv" else TYPED
    rows = draw(st.lists(st.fixed_dictionaries({"k": cells, "v": cells, "n": cells}), max_size=12))
    columns = draw(st.sampled_from([("k",), ("k", "v"), ("v", "k")]))
    return form, rows, columns


@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(tables(), QUESTION, st.integers(1, 6))
def test_the_store_answers_as_the_index_in_memory(
    tmp_path: Path,
    table: tuple[str, list[dict[str, Any]], tuple[str, ...]],
    words: list[str],
    limit: int,
) -> None:
    form, rows, columns = table
    folder = tmp_path / f"t{next(EXAMPLES)}"
    folder.mkdir()
    name = f"table.{form}"
    if form == "csv":
        write_csv(folder / name, rows, ["k", "v", "n"])
    elif form == "json":
        (folder / name).write_text(json.dumps(rows, default=str), encoding="utf-8")
    else:  # dates stay dates
        (folder / name).write_text(yaml.safe_dump(rows), encoding="utf-8")
    pipeline = pipeline_with(folder, name, columns)
    stored = table_keys(pipeline, options_of(pipeline))
    assert isinstance(stored, StoredIndex)
    memory = KeyIndex(shared_rows(table_version(folder / name)), columns)
    text = " ".join(words)
    assert stored.find(text) == memory.find(text)
    assert stored.mentioned(text, limit) == memory.mentioned(text, limit)
    asked = [*memory.find(text), *words[:3]]
    assert stored.rows_for(*asked) == memory.rows_for(*asked)
    assert [stored.spelling(word) for word in words] == [memory.spelling(word) for word in words]
    assert (list(stored.keys), len(stored.keys)) == (memory.keys, len(memory.keys))
    assert stored.table_columns == memory.table_columns


@given(
    st.lists(
        st.fixed_dictionaries({"k": TYPED, "when": st.datetimes(timezones=st.just(timezone.utc))})
    )
)
def test_a_stored_row_reads_back_as_the_very_same_values(rows: list[dict[str, Any]]) -> None:
    for row in rows:
        assert decode_row(encode_row(row, ["k", "when"]), ["k", "when"]) == row
        assert decode_row(encode_row(row, ["other"]), ["other"]) == row


def test_a_row_with_dates_and_nested_mappings_keeps_their_types() -> None:
    row = {"released": date(2023, 6, 10), "at": datetime(2023, 6, 10, 8, 0), "x": {"~date": "no"}}
    assert decode_row(encode_row(row, list(row)), list(row)) == row


def test_the_lookup_tool_gives_the_same_rows_and_sources_from_the_store(tmp_path: Path) -> None:
    from runner.tools import ToolServices, build_tools

    pipeline = releases(tmp_path)
    tool: Any = build_tools(pipeline, ToolServices(pipeline))["releases"]
    assert isinstance(tool._index(), StoredIndex)
    found = tool.find_keys("is the xr-200 like Debian 12 or bullseye?")
    assert found == ["XR-200", "Debian 12", "bullseye"]
    assert [row["codename"] for row in tool.rows_for("debian 12")] == ["bookworm", "XR-200"]
    assert [tool.source_of(row).heading for row in tool.rows_for("debian 11")] == ["bullseye"]
    assert tool.keys() == ["bookworm", "bullseye", "XR-200", "Debian 12", "Debian 11"]


# --- built once, read without the table -------------------------------------------------------


def test_the_store_lives_in_the_state_folder_named_by_table_and_key_columns(tmp_path: Path) -> None:
    pipeline = releases(tmp_path)
    path = store_path(pipeline, options_of(pipeline))
    assert path.parent == tmp_path / ".runner" / "tables" and path.name.startswith("releases-")
    other = pipeline_with(tmp_path, "releases.csv", ("codename",))
    assert store_path(other, options_of(other)) != path


def test_a_later_run_answers_from_the_store_without_reading_the_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pipeline = releases(tmp_path)
    assert index_table(pipeline, options_of(pipeline)).rebuilt
    table_store._opened.cache_clear()

    def no_reading(*_: Any) -> Any:
        raise AssertionError("the table was read")

    monkeypatch.setattr("runner.documents.table_files._cached_rows", no_reading)
    index = table_keys(pipeline, options_of(pipeline))
    assert isinstance(index, StoredIndex)
    assert index.rows_for("bookworm") == [{"codename": "bookworm", "version": "Debian 12"}]
    assert known_values(pipeline, "") == {
        "codename": [r["codename"] for r in RELEASES] + ["Debian 12", "Debian 11"]
    }


def test_a_long_tables_listing_comes_from_the_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = [{"model": f"XR-{i}"} for i in range(500)]
    write_csv(tmp_path / "models.csv", rows, ["model"])
    pipeline = pipeline_with(tmp_path, "models.csv", ("model",))
    index_table(pipeline, options_of(pipeline))
    table_store._opened.cache_clear()
    monkeypatch.setattr(
        "runner.documents.table_files._cached_rows", lambda *_: pytest.fail("the table was read")
    )
    assert known_values(pipeline, "is the xr 70 like XR-99?") == {"model": ["XR-99", "XR-70"]}


def test_a_short_tables_keys_are_read_from_the_store_once_per_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pipeline = releases(tmp_path)
    index = table_keys(pipeline, options_of(pipeline))
    assert isinstance(index, StoredIndex)
    reads = []
    spellings = StoredIndex.spellings
    monkeypatch.setattr(StoredIndex, "spellings", lambda self: reads.append(1) or spellings(self))
    listed = [known_values(pipeline, "") for _ in range(3)]  # three extractions' prompts
    assert listed[0] == listed[2] and len(reads) == 1


def test_a_long_tables_keys_are_not_kept_in_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(table_store, "_KEPT_KEYS", 2)
    pipeline = releases(tmp_path)  # five keys
    index = table_keys(pipeline, options_of(pipeline))
    reads = []
    spellings = StoredIndex.spellings
    monkeypatch.setattr(StoredIndex, "spellings", lambda self: reads.append(1) or spellings(self))
    assert list(index.keys) == list(index.keys) and len(reads) == 2


def test_runner_index_leaves_an_up_to_date_store_alone_and_force_rebuilds(tmp_path: Path) -> None:
    pipeline = releases(tmp_path)
    first = index_table(pipeline, options_of(pipeline))
    assert (first.rebuilt, first.reason, first.rows, first.keys) == (True, "missing", 3, 5)
    assert index_table(pipeline, options_of(pipeline)).reason == "up to date"
    assert index_table(pipeline, options_of(pipeline), force=True).reason == "forced"


# --- staleness --------------------------------------------------------------------------------


def test_an_edited_table_is_rebuilt_and_answers_its_new_rows(tmp_path: Path) -> None:
    pipeline = releases(tmp_path)
    assert table_keys(pipeline, options_of(pipeline)).rows_for("trixie") == []
    write_csv(
        tmp_path / "releases.csv",
        [*RELEASES, {"codename": "trixie", "version": "Debian 13"}],
        ["codename", "version"],
    )
    os.utime(tmp_path / "releases.csv", ns=(1, 10**18))  # a new mtime even on a coarse clock
    assert (
        table_keys(pipeline, options_of(pipeline)).rows_for("Debian 13")[0]["codename"] == "trixie"
    )
    assert index_table(pipeline, options_of(pipeline)).reason == "up to date"


def test_a_touched_table_is_not_rebuilt(tmp_path: Path) -> None:
    pipeline = releases(tmp_path)
    index_table(pipeline, options_of(pipeline))
    os.utime(tmp_path / "releases.csv", ns=(1, 10**18))
    status = index_table(pipeline, options_of(pipeline))
    assert (status.rebuilt, status.reason) == (False, "up to date")


def test_a_store_of_another_normalisation_is_rebuilt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pipeline = releases(tmp_path)
    index_table(pipeline, options_of(pipeline))
    monkeypatch.setattr(table_store, "NORMALISATION", 999)
    assert index_table(pipeline, options_of(pipeline)).reason.startswith(
        "stale (key columns or format"
    )


def test_a_broken_store_file_is_rebuilt(tmp_path: Path) -> None:
    pipeline = releases(tmp_path)
    path = store_path(pipeline, options_of(pipeline))
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not a database at all")
    assert isinstance(table_keys(pipeline, options_of(pipeline)), StoredIndex)
    assert index_table(pipeline, options_of(pipeline)).reason == "up to date"


# --- a store that cannot be written -----------------------------------------------------------


def test_an_unwritable_state_folder_falls_back_to_memory_with_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    blocked = tmp_path / "state"
    blocked.write_text("a file where the state folder should be", encoding="utf-8")
    pipeline = releases(tmp_path, state_dir=blocked)
    with caplog.at_level(logging.WARNING, logger="runner.documents.table_files"):
        first = table_keys(pipeline, options_of(pipeline))
        os.utime(tmp_path / "releases.csv", ns=(1, 10**18))  # a new version: opened again
        second = table_keys(pipeline, options_of(pipeline))
    assert isinstance(first, KeyIndex) and isinstance(second, KeyIndex)
    assert second.find("bookworm or xr-200") == ["bookworm", "XR-200"]
    (record,) = caplog.records
    assert "cannot be stored" in record.getMessage() and str(blocked) in record.getMessage()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder")
def test_a_read_only_state_folder_falls_back_to_memory(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir(mode=0o500)
    pipeline = releases(tmp_path, state_dir=state)
    try:
        assert isinstance(table_keys(pipeline, options_of(pipeline)), KeyIndex)
    finally:
        state.chmod(0o700)


def test_an_up_to_date_store_is_opened_not_rebuilt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pipeline = releases(tmp_path)
    index_table(pipeline, options_of(pipeline))
    table_store._opened.cache_clear()
    monkeypatch.setattr(table_store, "_build", lambda *_: pytest.fail("rebuilt"))
    index: KeyMatcher = table_keys(pipeline, options_of(pipeline))
    assert isinstance(index, StoredIndex) and index.spelling("xr-200") == "XR-200"
