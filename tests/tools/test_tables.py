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
