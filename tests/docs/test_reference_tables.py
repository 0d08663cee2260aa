"""docs/reference.md's key tables are made from the pipeline schema (runner.config.reference):
a key added to the schema, or a default or description changed there, is in the reference once
`python -m runner.config.reference` has run, and this test says when it has not."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from runner.config import keys, reference

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "docs" / "reference.md"


def test_the_reference_s_key_tables_are_the_schema_s() -> None:
    text = REFERENCE.read_text(encoding="utf-8")
    assert reference.rewritten(text) == text, (
        "docs/reference.md's key tables differ from schemas/pipeline.schema.json; "
        f"run `{reference.COMMAND}`"
    )


def test_every_table_of_the_schema_is_marked_in_the_reference() -> None:
    text = REFERENCE.read_text(encoding="utf-8")
    for table in reference.TABLES:
        assert reference.marker(table.definition) in text
        assert reference.marker(table.definition, end=True) in text


def test_a_default_changed_in_the_schema_changes_the_reference(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    changed = copy.deepcopy(keys.pipeline_schema())
    changed["$defs"]["limits"]["properties"]["max_depth"]["default"] = 9
    monkeypatch.setattr(keys, "pipeline_schema", lambda: changed)
    table = reference.table_text(reference.Table("limits"))
    assert "| `max_depth` | `9` |" in table


def test_a_required_key_says_so_and_a_pair_of_keys_is_one_row() -> None:
    table = reference.table_text(reference.Table("prompt_tool"))
    assert "| `template` / `prompt` | required: one of the two |" in table
    assert "| `offline` / `offline_template` | — |" in table


def test_a_flattened_block_s_keys_are_written_with_its_name() -> None:
    table = reference.table_text(reference.Table("corpus", flatten=("pages",)))
    assert "| `pages.max_words` | `250` |" in table


def test_the_check_says_the_command_that_makes_the_tables(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stale = tmp_path / "reference.md"
    stale.write_text(
        REFERENCE.read_text(encoding="utf-8").replace(
            "| `max_depth` | `4` |", "| `max_depth` | `5` |"
        ),
        encoding="utf-8",
    )
    assert reference.main(["--check", str(stale)]) == 1
    assert reference.COMMAND in capsys.readouterr().out
    assert reference.main([str(stale)]) == 0
    assert reference.main(["--check", str(stale)]) == 0
