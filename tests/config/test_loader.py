"""YAML loading: safe, positioned, strict about duplicates, bounded in alias expansion."""

from __future__ import annotations

from pathlib import Path

import pytest

from runner.documents.composing import DEFAULT_LIMITS
from runner.documents.loader import LoadError, parse_document


def parse(text: str):  # type: ignore[no-untyped-def]
    return parse_document(Path("p.yaml"), text)


def error_of(text: str):  # type: ignore[no-untyped-def]
    with pytest.raises(LoadError) as caught:
        parse(text)
    return caught.value.diagnostic


def test_values_and_keys_keep_their_one_based_line_and_column() -> None:
    document = parse("domain: shop\ntools:\n  - name: faq\n    kind: prompt\n")
    assert document.data == {"domain": "shop", "tools": [{"name": "faq", "kind": "prompt"}]}
    value = document.position(("tools", 0, "kind"))
    key = document.position(("tools", 0, "kind"), at_key=True)
    assert ((value.line, value.col), (key.line, key.col)) == ((4, 11), (4, 5))


def test_a_missing_path_points_at_its_nearest_ancestor() -> None:
    document = parse("tools:\n  - name: faq\n")
    position = document.position(("tools", 0, "kind"))
    assert (position.line, position.col) == (2, 5)


def test_duplicate_key_is_an_error_at_the_second_key() -> None:
    diagnostic = error_of("domain: a\ntools: []\ndomain: b\n")
    assert (diagnostic.code, diagnostic.line, diagnostic.col) == ("Y002", 3, 1)
    assert "first given at line 1" in diagnostic.message


def test_alias_expansion_is_bounded() -> None:
    layers = ["a: &a [" + ", ".join(["x"] * 10) + "]"]
    for index, name in enumerate("bcdefg"):
        previous = "abcdefg"[index]
        layers.append(f"{name}: &{name} [" + ", ".join([f"*{previous}"] * 10) + "]")
    diagnostic = error_of("\n".join(layers) + "\n")
    assert diagnostic.code == "Y003"
    assert f"{DEFAULT_LIMITS.max_nodes:,}" in diagnostic.message


def test_a_few_aliases_are_fine() -> None:
    document = parse("base: &base {top_k: 3}\nother: *base\n")
    assert document.data["other"] == {"top_k": 3}


def test_recursive_alias_is_an_error() -> None:
    assert error_of("tools: &t [*t]\n").code == "Y004"


def test_merge_key_fills_only_missing_keys() -> None:
    document = parse("base: &base {top_k: 3, mode: keyword}\ntool:\n  <<: *base\n  top_k: 5\n")
    assert document.data["tool"] == {"top_k": 5, "mode": "keyword"}


def test_plain_keys_stay_as_written() -> None:
    document = parse("yes: 1\n2: two\n")
    assert document.data == {"yes": 1, "2": "two"}


def test_a_list_as_key_is_an_error() -> None:
    assert error_of("? [a, b]\n: 1\n").code == "Y007"


@pytest.mark.parametrize(
    "text", ["a: !!python/name:os.system x\n", "a: !!python/object/apply:os.system [ls]\n"]
)
def test_unsafe_tags_are_refused(text: str) -> None:
    assert error_of(text).code == "Y008"


def test_syntax_error_has_its_place_and_a_hint() -> None:
    diagnostic = error_of("a:\n  b: c: d\n")
    assert (diagnostic.code, diagnostic.line, diagnostic.col) == ("Y001", 2, 7)
    assert "quoted" in diagnostic.hint


def test_a_second_document_is_an_error() -> None:
    diagnostic = error_of("a: 1\n---\nb: 2\n")
    assert diagnostic.code == "Y001"
    assert "one YAML document" in diagnostic.hint


def test_block_scalar_records_its_style_and_extent() -> None:
    document = parse("prompt: |\n  line one\n  line two\nnext: 1\n")
    position = document.position(("prompt",))
    assert (position.style, position.line) == ("|", 1)
    assert position.end_line >= 3


def test_not_utf8_is_reported_with_its_place(tmp_path: Path) -> None:
    from runner.documents.loader import read_document

    path = tmp_path / "p.yaml"
    path.write_bytes(b"domain: shop\ndescription: caf\xe9\n")
    with pytest.raises(LoadError) as caught:
        read_document(path)
    diagnostic = caught.value.diagnostic
    assert (diagnostic.code, diagnostic.line, diagnostic.col) == ("Y005", 2, 17)


# --- hostile files: refused with a place, in bounded time and memory ----------------------


@pytest.mark.parametrize(
    "value",
    ["!!timestamp x", "!!bool maybe", '!!int ""', '!!float ""', "!!int +", "!!null x"],
)
def test_an_explicit_tag_on_a_value_it_cannot_hold_is_a_located_error(value: str) -> None:
    diagnostic = error_of(f"domain: shop\nversion: {value}\n")
    assert (diagnostic.code, diagnostic.line, diagnostic.col) == ("Y008", 2, 10)
    assert "cannot be read as" in diagnostic.message


@pytest.mark.parametrize(
    "value", ["!!binary aGk=", "!!omap x", "!!map x", "!!set [a]", "!!str [a]"]
)
def test_a_tag_safe_loading_does_not_build_is_a_located_error(value: str) -> None:
    diagnostic = error_of(f"version: {value}\n")
    assert (diagnostic.code, diagnostic.line, diagnostic.col) == ("Y008", 1, 10)


def test_explicit_tags_that_fit_their_values_are_read() -> None:
    document = parse('a: !!int "7"\nb: !!float 2\nc: !!bool "yes"\nd: !!str 3\n')
    assert document.data == {"a": 7, "b": 2.0, "c": True, "d": "3"}


def test_nesting_past_the_depth_limit_is_refused_where_it_goes_too_deep() -> None:
    depth = DEFAULT_LIMITS.max_depth
    diagnostic = error_of("a: " + "[" * 500 + "]" * 500 + "\n")
    assert (diagnostic.code, diagnostic.line, diagnostic.col) == ("Y010", 1, 3 + depth)
    assert str(depth) in diagnostic.message


def test_nesting_past_libyamls_own_limit_is_the_same_located_refusal() -> None:
    # at 1,000 levels libyaml, reading ahead, stops before the composer counts to the limit
    diagnostic = error_of("a: " + "[" * 1000 + "]" * 1000 + "\n")
    assert (diagnostic.code, diagnostic.line) == ("Y010", 1)
    assert diagnostic.col > 1 and str(DEFAULT_LIMITS.max_depth) in diagnostic.message


def test_nesting_up_to_the_depth_limit_is_read() -> None:
    depth = DEFAULT_LIMITS.max_depth
    assert parse("[" * depth + "]" * depth + "\n").data is not None


def test_aliases_that_nest_past_the_depth_limit_are_refused_at_their_top_level_key() -> None:
    lines = ["a0: &a0 [x]"] + [f"a{i}: &a{i} [*a{i - 1}]" for i in range(1, 300)]
    diagnostic = error_of("\n".join(lines) + "\n")
    assert diagnostic.code == "Y010"
    assert diagnostic.line > 1 and "aliases" in diagnostic.message


def test_too_many_values_are_counted_while_composing_and_reported_as_such() -> None:
    limit = DEFAULT_LIMITS.max_nodes
    diagnostic = error_of("".join(f"k{i}: v\n" for i in range(limit)))
    assert diagnostic.code == "Y009"  # not Y003: there is no alias in the file
    assert diagnostic.line == limit // 2  # the root mapping, then a key and a value a line


def test_a_long_list_is_refused_at_the_first_item_too_many() -> None:
    limit = DEFAULT_LIMITS.max_nodes
    diagnostic = error_of("- a\n" * (limit + 10))
    assert (diagnostic.code, diagnostic.line) == ("Y009", limit)


def test_a_file_over_the_size_limit_is_refused_unread(tmp_path: Path) -> None:
    from runner.documents.composing import YamlLimits
    from runner.documents.loader import read_document

    path = tmp_path / "big.yaml"
    path.write_text("a: " + "x" * 2000 + "\n", encoding="utf-8")
    with pytest.raises(LoadError) as caught:
        read_document(path, YamlLimits(max_bytes=1000))
    assert (caught.value.diagnostic.code, caught.value.diagnostic.line) == ("Y011", 1)
    assert "1,000 bytes" in caught.value.diagnostic.message


@pytest.mark.parametrize(
    ("text", "line", "col"),
    [("domain: a\ntools: b\x00\n", 2, 9), ("é: ü\nab: \x07\n", 2, 5), ("\ufeffa: \x01\n", 1, 4)],
)
def test_a_control_character_is_reported_at_its_line_and_column(
    text: str, line: int, col: int
) -> None:
    diagnostic = error_of(text)
    assert (diagnostic.code, diagnostic.line, diagnostic.col) == ("Y012", line, col)
