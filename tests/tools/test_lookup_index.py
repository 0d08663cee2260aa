"""Lookup tables through their key index: the same matches as a scan of every key, rows named by
any of several key columns, and extraction prompts that never list a long table whole."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from runner.config import load_pipeline
from runner.config.model import LookupOptions, ToolConfig, ToolKind
from runner.llm.known_values import MAX_LISTED, known_values
from runner.sources import Source
from runner.tables.index import KeyIndex
from runner.text.words import tokenize

from .conftest import run, task

RELEASES = """codename,version,released
bookworm,Debian 12,2023
bullseye,Debian 11,2021
buster,Debian 10,2019
"""


def scanned_keys(keys: list[str], text: str) -> list[str]:
    """What the lookup tool matched before it had an index: every key against every position,
    longest first (by tokens, then characters), a claimed token never matched again."""
    tokens = tokenize(text)
    keyed = sorted(
        ((key, tokenize(key)) for key in dict.fromkeys(keys) if tokenize(key)),
        key=lambda item: (-len(item[1]), -len(item[0])),
    )
    claimed: set[int] = set()
    found: dict[int, str] = {}
    for key, wanted in keyed:
        for start in range(len(tokens) - len(wanted) + 1):
            span = set(range(start, start + len(wanted)))
            if tokens[start : start + len(wanted)] == wanted and not span & claimed:
                claimed |= span
                found.setdefault(start, key)
    return list(dict.fromkeys(found[start] for start in sorted(found)))


WORDS = st.sampled_from(["kd", "460", "460i", "kd-460", "x", "pro", "kw-620", "v2.1", "ab's"])
KEYS = st.lists(st.lists(WORDS, min_size=1, max_size=3).map(" ".join), max_size=12, unique=True)


@settings(max_examples=300, deadline=None)
@given(KEYS, st.lists(st.one_of(WORDS, st.sampled_from([",", "the", "KD-460.", "  "]))))
def test_the_index_finds_what_scanning_every_key_found(keys: list[str], words: list[str]) -> None:
    text = " ".join(words)
    index = KeyIndex([{"k": key} for key in keys], ["k"])
    assert index.find(text) == scanned_keys(keys, text)


def test_rows_are_found_case_insensitively_and_given_as_fresh_copies() -> None:
    index = KeyIndex([{"k": "KD-460", "n": 1}], ["k"])
    (row,) = index.rows_for("kd-460")
    row["n"] = 2
    assert index.rows_for(" KD-460 ") == [{"k": "KD-460", "n": 1}]
    assert index.spelling("kd-460") == "KD-460" and index.spelling("KD-461") is None


def test_a_long_table_names_in_a_compact_spelling_are_mentioned() -> None:
    index = KeyIndex([{"k": "XR-200"}, {"k": "Debian 12"}, {"k": "XR-300"}], ["k"])
    assert index.mentioned("is the xr200 like debian12?", 10) == ["XR-200", "Debian 12"]


def test_a_large_table_with_two_key_columns_is_matched_by_whole_words() -> None:
    index = KeyIndex([{"k": f"code{i}", "v": f"Release {i}"} for i in range(20_000)], ["k", "v"])
    assert index.find("code 7, code77 and release 19999") == ["code77", "Release 19999"]
    assert len(index.keys) == 40_000


# --- several key columns ----------------------------------------------------------------------


def releases_tool(**fields) -> ToolConfig:  # type: ignore[no-untyped-def]
    options = LookupOptions(
        table=Path("releases.csv"), key="codename", key_columns=("codename", "version"), **fields
    )
    return ToolConfig(name="releases", kind=ToolKind.LOOKUP, options=options)


def write_releases(folder: Path) -> None:
    (folder / "releases.csv").write_text(RELEASES, encoding="utf-8")


def test_a_row_is_found_by_any_of_its_key_columns_and_named_by_the_first(harness, tmp_path):
    write_releases(tmp_path)
    h = harness(releases_tool(columns=("codename", "version")))
    message = "what changed between Debian 11 and bookworm?"
    result = run(h.tools["releases"].execute(message, h.env(task(message))))
    assert (
        result.text
        == "codename: bullseye; version: Debian 11\ncodename: bookworm; version: Debian 12"
    )
    assert [source.heading for source in result.sources] == ["bullseye", "bookworm"]


def test_a_row_named_two_ways_in_one_question_is_given_once(harness, tmp_path):
    write_releases(tmp_path)
    h = harness(releases_tool(columns=("codename",)))
    message = "is bookworm (Debian 12) supported?"
    result = run(h.tools["releases"].execute(message, h.env(task(message))))
    assert result.text == "codename: bookworm"
    assert result.sources == (Source(document="releases.csv", heading="bookworm"),)


def test_direct_calls_and_extracted_values_use_every_key_column(harness, tmp_path):
    write_releases(tmp_path)
    h = harness(releases_tool(match="params", parameter="release"))
    h.prompts.extract_replies["releases"] = {"release": ["debian 10"]}
    result = run(h.tools["releases"].execute("the old one", h.env(task("the old one"))))
    assert result.sources == (Source(document="releases.csv", heading="buster"),)
    assert h.tools["releases"].rows_for("Debian 12")[0]["codename"] == "bookworm"


def releases_pipeline(folder: Path, key: str) -> Path:
    write_releases(folder)
    path = folder / "p.yaml"
    path.write_text(
        "domain: distro\ntools:\n  - name: releases\n    kind: lookup\n"
        f"    table: releases.csv\n    key: {key}\n",
        encoding="utf-8",
    )
    return path


def test_key_may_list_columns_in_the_pipeline_file(tmp_path: Path) -> None:
    options = load_pipeline(releases_pipeline(tmp_path, "[codename, version]")).tools[0].options
    assert isinstance(options, LookupOptions)
    assert (options.key, options.matched_columns) == ("codename", ("codename", "version"))


def test_a_key_column_the_table_lacks_is_reported_at_its_item(tmp_path: Path) -> None:
    from runner.config import validate_file

    (diagnostic,) = validate_file(releases_pipeline(tmp_path, "[codename, verison]")).diagnostics
    assert (diagnostic.code, diagnostic.line, diagnostic.col) == ("R120", 6, 21)
    assert "did you mean `version`?" in diagnostic.message


# --- what an extraction prompt lists ------------------------------------------------------------


def big_table_pipeline(tmp_path: Path, rows: int):  # type: ignore[no-untyped-def]
    lines = ["model,price"] + [f"XR-{i},{i}" for i in range(rows)]
    (tmp_path / "models.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    path = tmp_path / "p.yaml"
    path.write_text(
        "domain: shop\ntools:\n  - name: models\n    kind: lookup\n    table: models.csv\n"
        "    key: model\n    match: params\n    parameter: model\n",
        encoding="utf-8",
    )
    return load_pipeline(path)


def test_a_short_table_is_listed_whole(tmp_path: Path) -> None:
    values = known_values(big_table_pipeline(tmp_path, 5), "anything")
    assert values == {"model": ["XR-0", "XR-1", "XR-2", "XR-3", "XR-4"]}


def test_a_long_table_lists_only_what_the_text_names_and_never_more_than_the_cap(
    tmp_path: Path,
) -> None:
    pipeline = big_table_pipeline(tmp_path, 100_000)
    assert known_values(pipeline, "price of the XR-70 and the xr 99999?") == {
        "model": ["XR-70", "XR-99999"]
    }
    many = " ".join(f"XR-{i}" for i in range(1000))
    assert len(known_values(pipeline, many)["model"]) == MAX_LISTED
    assert known_values(pipeline, "nothing known here") == {}
