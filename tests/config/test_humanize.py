"""Schema errors in an author's words: all at once, in file order, no jsonschema jargon, and for
an alternative (`oneOf`) the errors of the branch the author meant."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from runner.config import validate_file

from .helpers import BASE, FIXTURES

JARGON = (
    "is not valid under any of the given schemas",
    "Unevaluated properties",
    "valid under each",
)


def codes_and_lines(path: Path) -> list[tuple[str, int]]:
    return [(d.code, d.line) for d in validate_file(path).diagnostics]


def test_all_errors_of_a_file_come_at_once_in_file_order(
    write_pipeline: Callable[..., Path],
) -> None:
    path = write_pipeline(
        "domain: shop\n"
        "tools:\n"
        "  - name: faq\n"
        "    kind: prompt\n"
        "    priorty: 1\n"
        "    prompt: hi\n"
        "  - name: Bad\n"
        "    kind: prompt\n"
        "    prompt: hi\n"
        "limits: {max_depth: -1}\n"
    )
    assert codes_and_lines(path) == [("S101", 5), ("S105", 7), ("S106", 10)]


def test_a_rule_activation_reports_the_rule_branchs_error(
    write_pipeline: Callable[..., Path],
) -> None:
    path = write_pipeline(BASE + "    activation: {keywords: [price], patern: 'x'}\n")
    [diagnostic] = validate_file(path).diagnostics
    assert diagnostic.code == "S101"
    assert diagnostic.message.endswith("did you mean `pattern`?")


def test_a_wrong_kind_is_reported_alone(write_pipeline: Callable[..., Path]) -> None:
    path = write_pipeline(
        "domain: shop\ntools:\n  - name: t\n    kind: retreive\n    corpus: docs\n    top_k: 2\n"
    )
    [diagnostic] = validate_file(path).diagnostics
    assert (diagnostic.code, diagnostic.line) == ("S104", 4)
    assert "did you mean `retrieve`?" in diagnostic.message


def test_a_wrong_type_for_a_text_suggests_quoting(write_pipeline: Callable[..., Path]) -> None:
    path = write_pipeline(BASE + "    instruction: no\n")
    [diagnostic] = validate_file(path).diagnostics
    assert diagnostic.code == "S103"
    assert diagnostic.hint == 'quote it to make it a text: "no"'


def test_an_empty_file_says_the_top_level_must_be_a_mapping(
    write_pipeline: Callable[..., Path],
) -> None:
    [diagnostic] = validate_file(write_pipeline("# nothing yet\n")).diagnostics
    assert (diagnostic.code, diagnostic.line, diagnostic.col) == ("S103", 1, 1)
    assert diagnostic.message == "the top level must be a mapping, not an empty value"


def test_a_missing_key_names_what_it_is_for(write_pipeline: Callable[..., Path]) -> None:
    [diagnostic] = validate_file(write_pipeline("domain: shop\n")).diagnostics
    assert diagnostic.message == "missing required key `tools` in the top level"
    assert diagnostic.hint == "`tools`: The domain's tools."


def test_no_fixture_message_carries_jsonschema_jargon() -> None:
    for path in sorted((FIXTURES / "invalid").glob("*.yaml")):
        for diagnostic in validate_file(path).diagnostics:
            assert not any(phrase in diagnostic.message for phrase in JARGON), path.name
            assert diagnostic.code != "S199", path.name


def test_swapped_letters_in_a_short_key_still_get_a_did_you_mean(
    write_pipeline: Callable[..., Path],
) -> None:
    path = write_pipeline(
        "domain: shop\ntools:\n  - name: faq\n    kind: prompt\n    prompt: hi\n    prioirty: 1\n"
    )
    (diagnostic,) = validate_file(path).diagnostics
    assert diagnostic.message.endswith("did you mean `priority`?")


def test_a_misspelt_required_key_is_one_error_not_two(
    write_pipeline: Callable[..., Path],
) -> None:
    path = write_pipeline(
        "domain: shop\ntools:\n  - name: prices\n    kind: lookup\n    table: t.csv\n"
        "    kye: item\n"
    )
    (path.parent / "t.csv").write_text("item,price\ntea,2\n", encoding="utf-8")
    (diagnostic,) = validate_file(path).diagnostics
    assert (diagnostic.code, diagnostic.line, diagnostic.col) == ("S101", 6, 5)
    assert "did you mean `key`?" in diagnostic.message


def test_two_keys_that_exclude_each_other_are_explained_by_the_schema(
    write_pipeline: Callable[..., Path],
) -> None:
    path = write_pipeline(BASE + "answer: {template: answer.j2, prompt: hi}\n")
    [diagnostic] = [d for d in validate_file(path).diagnostics if d.code == "S110"]
    assert diagnostic.message == "answer gives both `template` and `prompt`; keep one"
    assert diagnostic.hint == "`template` names a file; `prompt` holds the template text itself"
