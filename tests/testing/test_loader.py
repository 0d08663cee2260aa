"""Finding and loading test-case files, and their diagnostics (runner/testing/loader.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from runner.resources import schema_path
from runner.testing import CaseFileError, find_case_files, load_case_file
from runner.testing.loader import cached_pipeline_loader, case_schema

Write = Callable[..., Path]

MINIMAL_CASE = """
cases:
  - name: one
    turns:
      - message: What does the KW-620 cost?
"""


def problems(path: Path) -> list[tuple[str, int, str]]:
    """(code, line, message) of every diagnostic the file gets."""
    with pytest.raises(CaseFileError) as caught:
        load_case_file(path, cached_pipeline_loader())
    return [(d.code, d.line, d.message) for d in caught.value.diagnostics]


def test_folders_are_searched_for_files_with_cases(write: Write, shop: Path) -> None:
    cases = write(MINIMAL_CASE, "tests/prices.yaml")
    write("rules: []\n", "tests/rules.yaml")  # a script file: no `cases`
    write(MINIMAL_CASE, ".runner/hidden.yaml")
    assert find_case_files([shop]) == [cases]


def test_a_file_given_by_name_is_always_taken(write: Write) -> None:
    other = write("something: else\n", "other.yaml")
    assert find_case_files([other]) == [other]


def test_the_pipeline_defaults_to_the_one_in_the_parent_folder(write: Write, shop: Path) -> None:
    path = write(MINIMAL_CASE, "tests/prices.yaml")
    case_file, pipeline = load_case_file(path, cached_pipeline_loader())
    assert case_file.pipeline == (shop / "shop.yaml").resolve()
    assert pipeline.domain == "shop"


def test_a_missing_pipeline_file_is_reported_with_the_fix(write: Write) -> None:
    path = write("pipeline: ../nowhere.yaml\n" + MINIMAL_CASE)
    [(code, line, message)] = problems(path)
    assert (code, line) == ("T104", 1) and "`../nowhere.yaml` not found" in message


def test_two_candidate_pipelines_must_be_named(write: Write, shop: Path) -> None:
    (shop / "copy.yaml").write_text((shop / "shop.yaml").read_text(encoding="utf-8"))
    [(code, _line, message)] = problems(write(MINIMAL_CASE))
    assert code == "T104" and "several pipeline files" in message


def test_schema_errors_read_like_validate_s(write: Write) -> None:
    path = write(
        """
cases:
  - name: typo
    turns:
      - message: Hello
        expect:
          outcom: answer
"""
    )
    [(code, line, message)] = problems(path)
    assert (code, line) == ("S101", 7)
    assert "unknown key `outcom`" in message and "did you mean `outcome`?" in message


def test_a_yaml_error_is_reported_with_its_place(write: Write) -> None:
    path = write("cases:\n  - name: a\n    name: b\n    turns: []\n")
    [(code, line, _message)] = problems(path)
    assert (code, line) == ("Y002", 3)


def test_a_source_may_name_the_heading_of_its_section(write: Write) -> None:
    path = write(
        """
cases:
  - name: by section
    turns:
      - message: What does the KW-620 cost?
        expect:
          sources: [{document: products.csv, heading: KW-620}]
"""
    )
    case_file, _pipeline = load_case_file(path, cached_pipeline_loader())
    (source,) = case_file.cases[0].turns[0].expect.sources
    assert (source.document, source.heading, source.page) == ("products.csv", "KW-620", None)


def test_t101_a_turn_is_a_message_or_an_answer(write: Write) -> None:
    path = write(
        """
cases:
  - name: both
    turns:
      - message: Hello
        answer: KW-620
"""
    )
    codes = [code for code, _line, _message in problems(path)]
    assert codes == ["T101", "T102"]


def test_t102_a_case_cannot_start_with_an_answer(write: Write) -> None:
    path = write(
        """
cases:
  - name: answer first
    turns:
      - answer: KW-620
"""
    )
    [(code, line, _message)] = problems(path)
    assert (code, line) == ("T102", 5)


def test_t103_case_names_are_unique(write: Write) -> None:
    path = write(MINIMAL_CASE + MINIMAL_CASE.replace("cases:\n", ""))
    [(code, line, message)] = problems(path)
    assert (code, line) == ("T103", 7) and "first at line 3" in message


def test_t105_a_script_file_must_exist(write: Write) -> None:
    path = write("llm: {script_file: rules.yaml}\n" + MINIMAL_CASE)
    [(code, _line, message)] = problems(path)
    assert code == "T105" and "`rules.yaml` not found" in message


def test_t106_regular_expressions_must_compile(write: Write) -> None:
    path = write(
        """
llm:
  script:
    - {purpose: answer, task: "(unclosed", reply: x}
cases:
  - name: regex
    turns:
      - message: Hello
        expect: {answer: {matches: "[a-"}}
"""
    )
    assert [(code, line) for code, line, _message in problems(path)] == [
        ("T106", 4),
        ("T106", 9),
    ]


def test_t107_a_misspelt_tool_is_refused_with_a_suggestion(write: Write) -> None:
    path = write(
        """
llm:
  script:
    - {purpose: tool, tool: compair, reply: x}
cases:
  - name: typo
    turns:
      - message: Hello
        expect: {not_ran: ["1:prise"], ran: ["1.*:spec*"]}
"""
    )
    found = problems(path)
    assert [(code, line) for code, line, _message in found] == [("T107", 4), ("T107", 9)]
    assert "did you mean `compare`?" in found[0][2] and "did you mean `price`?" in found[1][2]


def test_a_script_file_s_rules_follow_the_inline_rules_with_their_places(write: Write) -> None:
    write(
        """
fallback: offline
rules:
  - {purpose: answer, reply: from the file}
""",
        "rules.yaml",
    )
    path = write(
        """
llm:
  script:
    - {purpose: suitability, reply: {compare: false, price: true}}
  script_file: rules.yaml
"""
        + MINIMAL_CASE
    )
    case_file, _pipeline = load_case_file(path, cached_pipeline_loader())
    llm = case_file.cases[0].llm
    assert [rule.purpose for rule in llm.script] == ["suitability", "answer"]
    assert llm.fallback == "offline"
    assert llm.script[1].where is not None and llm.script[1].where.line == 4
    assert llm.script[1].where.file.name == "rules.yaml"


def test_a_script_file_with_a_bad_rule_is_reported_in_that_file(write: Write) -> None:
    write("- {purpose: anser, reply: x}\n", "rules.yaml")
    path = write("llm: {script_file: rules.yaml}\n" + MINIMAL_CASE)
    with pytest.raises(CaseFileError) as caught:
        load_case_file(path, cached_pipeline_loader())
    [diagnostic] = caught.value.diagnostics
    assert diagnostic.file.name == "rules.yaml" and diagnostic.code == "S104"
    assert "did you mean `answer`?" in diagnostic.message


def test_the_schema_s_script_rule_matches_the_pipeline_schema_s() -> None:
    pipeline = json.loads(schema_path("pipeline").read_text(encoding="utf-8"))["$defs"]
    ours = case_schema()["properties"]["llm"]["properties"]["script"]["items"]
    theirs = pipeline["script_rule"]
    assert set(ours["properties"]) == set(theirs["properties"])
    assert ours["required"] == theirs["required"]
    assert ours["properties"]["purpose"]["enum"] == pipeline["purpose"]["enum"]


@pytest.mark.parametrize(
    "named",
    ["/etc/passwd", "/proc/self/environ", "../../../etc/hostname", "/nonexistent/tape.yaml"],
)
@pytest.mark.parametrize("key", ["script_file", "cassette"])
def test_t105_a_case_names_no_file_outside_its_pipeline_folder(
    write: Write, key: str, named: str
) -> None:
    """Issue 19, H1: `llm: {script_file: /etc/passwd}` read the file and quoted its lines, and
    a cassette told whether a file exists. Refused, the same for a file that exists and one
    that does not."""
    path = write(
        f"cases:\n  - name: leak\n    llm: {{{key}: {named}}}\n    turns:\n      - message: hi\n"
    )
    [(code, line, message)] = problems(path)
    assert (code, line) == ("T105", 3)
    assert "outside the pipeline's folder" in message
    assert "root:" not in message and "not found" not in message


def test_t105_a_symbolic_link_out_of_the_pipeline_folder_is_refused(
    write: Write, shop: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "secret.yaml"
    outside.write_text("rules: []\n", encoding="utf-8")
    (shop / "rules.yaml").symlink_to(outside)
    [(code, _line, message)] = problems(write("llm: {script_file: rules.yaml}\n" + MINIMAL_CASE))
    assert code == "T105" and "outside the pipeline's folder" in message


def test_a_script_file_in_a_sibling_folder_of_the_pipeline_is_read(write: Write) -> None:
    write("rules: []\n", "shared/rules.yaml")
    path = write("llm: {script_file: ../shared/rules.yaml}\n" + MINIMAL_CASE, "tests/one.yaml")
    case_file, _pipeline = load_case_file(path, cached_pipeline_loader())
    assert case_file.cases[0].name == "one"
