"""runner.documents.table_files: one cached loader of CSV/YAML/JSON tables."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from runner.documents.table_files import TableError, load_table


def test_csv_yaml_and_json_tables_give_the_same_rows(tmp_path: Path):
    rows = [{"model": "A-1", "name": "Alpha"}, {"model": "B-2", "name": "Beta"}]
    (tmp_path / "t.csv").write_text("model,name\nA-1,Alpha\nB-2,Beta\n", encoding="utf-8")
    (tmp_path / "t.yaml").write_text(
        "- {model: A-1, name: Alpha}\n- {model: B-2, name: Beta}\n", encoding="utf-8"
    )
    (tmp_path / "t.json").write_text(json.dumps({"rows": rows}), encoding="utf-8")
    for name in ("t.csv", "t.yaml", "t.json"):
        assert load_table(tmp_path / name) == rows


def test_an_edited_table_is_read_again(tmp_path: Path):
    path = tmp_path / "t.csv"
    path.write_text("k\nold\n", encoding="utf-8")
    assert load_table(path) == [{"k": "old"}]
    path.write_text("k\nnew value\n", encoding="utf-8")
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 1_000_000))
    assert load_table(path) == [{"k": "new value"}]


def test_callers_get_their_own_rows(tmp_path: Path):
    path = tmp_path / "t.csv"
    path.write_text("k\nv\n", encoding="utf-8")
    load_table(path)[0]["k"] = "changed"
    assert load_table(path) == [{"k": "v"}]


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("t.yaml", "model: A-1\n", "must be a list of rows"),
        ("t.json", "{not json", "not valid JSON"),
        ("t.yaml", "- [unclosed\n", "not valid YAML"),
        ("t.txt", "x", "must be a .csv, .yaml, .yml or .json file"),
    ],
)
def test_a_broken_table_is_reported_with_its_file_and_the_fix(tmp_path, name, text, message):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(TableError, match=message) as error:
        load_table(path)
    assert name in str(error.value)


def test_a_table_reached_through_a_link_is_read_again_when_the_link_points_elsewhere(
    tmp_path: Path,
) -> None:
    first, second = tmp_path / "first.csv", tmp_path / "second.csv"
    first.write_text("k\none\n", encoding="utf-8")
    second.write_text("k\ntwo\n", encoding="utf-8")
    os.utime(second, ns=(first.stat().st_atime_ns, first.stat().st_mtime_ns))  # alike but path
    link = tmp_path / "table.csv"
    link.symlink_to(first)
    assert load_table(link) == [{"k": "one"}]
    link.unlink()
    link.symlink_to(second)
    assert load_table(link) == [{"k": "two"}]


def test_an_unchanged_table_s_path_is_not_resolved_again(tmp_path: Path, monkeypatch) -> None:
    from runner.documents.table_files import table_version

    path = tmp_path / "t.csv"
    path.write_text("k\nv\n", encoding="utf-8")
    version = table_version(path)
    assert version == (path.resolve(), path.stat().st_mtime_ns, path.stat().st_size)
    resolved: list[Path] = []
    original = Path.resolve
    monkeypatch.setattr(Path, "resolve", lambda self: resolved.append(self) or original(self))
    assert table_version(path) == version and not resolved
