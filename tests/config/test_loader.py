"""YAML loading: safe, positioned, strict about duplicates, bounded in alias expansion."""

from __future__ import annotations

from pathlib import Path

import pytest

from runner.config.loader import MAX_NODES, LoadError, parse_document


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
    assert f"{MAX_NODES:,}" in diagnostic.message


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
    from runner.config.loader import read_document

    path = tmp_path / "p.yaml"
    path.write_bytes(b"domain: shop\ndescription: caf\xe9\n")
    with pytest.raises(LoadError) as caught:
        read_document(path)
    diagnostic = caught.value.diagnostic
    assert (diagnostic.code, diagnostic.line, diagnostic.col) == ("Y005", 2, 17)
