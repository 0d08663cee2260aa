"""`runner index` builds the key indexes of a pipeline's lookup tables, as it does corpora's."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from runner.cli import main

RELEASES = "codename,version\nbookworm,Debian 12\nbullseye,Debian 11\n"


def write_pipeline(folder: Path, state_dir: str | None = None) -> Path:
    (folder / "releases.csv").write_text(RELEASES, encoding="utf-8")
    path = folder / "p.yaml"
    state = f"state_dir: {state_dir}\n" if state_dir else ""
    path.write_text(
        f"domain: distro\n{state}tools:\n  - name: releases\n    kind: lookup\n"
        "    description: Debian releases.\n    activation:\n      pattern: Debian\n"
        "    table: releases.csv\n    key: [codename, version]\n",
        encoding="utf-8",
    )
    return path


def invoke(*args: str):  # type: ignore[no-untyped-def]
    return CliRunner().invoke(main, list(args))


def test_index_builds_a_tables_store_then_reports_it_up_to_date(tmp_path: Path) -> None:
    path = write_pipeline(tmp_path)
    first = invoke("index", str(path))
    assert first.exit_code == 0, first.output
    assert "releases: rebuilt (missing), 2 rows, 4 keys" in first.output
    (store,) = (tmp_path / ".runner" / "tables").glob("releases-*.sqlite")
    assert str(store) in first.output
    assert "releases: up to date, 2 rows, 4 keys" in invoke("index", str(path)).output
    assert "releases: rebuilt (forced)" in invoke("index", str(path), "--force").output


def test_index_of_an_edited_table_rebuilds_it(tmp_path: Path) -> None:
    path = write_pipeline(tmp_path)
    invoke("index", str(path))
    (tmp_path / "releases.csv").write_text(RELEASES + "trixie,Debian 13\n", encoding="utf-8")
    assert "releases: rebuilt (stale (table changed)), 3 rows" in invoke("index", str(path)).output


def test_index_table_picks_a_lookup_tool_and_corpus_alone_skips_tables(tmp_path: Path) -> None:
    path = write_pipeline(tmp_path)
    assert "releases: rebuilt" in invoke("index", str(path), "--table", "releases").output
    unknown = invoke("index", str(path), "--table", "prices")
    assert unknown.exit_code == 2
    assert "no lookup tool named prices (lookup tools: releases)" in unknown.output


def test_index_of_a_store_that_cannot_be_written_fails_naming_it(tmp_path: Path) -> None:
    (tmp_path / "state").write_text("a file in the way", encoding="utf-8")
    result = invoke("index", str(write_pipeline(tmp_path, state_dir="state")))
    assert result.exit_code == 1
    assert "releases: cannot write the index of its table at" in result.output
    assert str(tmp_path / "state") in result.output


def test_run_answers_from_the_store_runner_index_built(tmp_path: Path) -> None:
    path = write_pipeline(tmp_path)
    invoke("index", str(path))
    (store,) = (tmp_path / ".runner" / "tables").glob("releases-*.sqlite")
    built = store.stat()
    result = invoke("run", str(path), "Is Debian 11 still supported?", "--llm", "offline", "--json")
    assert result.exit_code == 0, result.output
    assert '"heading": "bullseye"' in result.output
    assert (store.stat().st_ino, store.stat().st_mtime_ns) == (built.st_ino, built.st_mtime_ns)
