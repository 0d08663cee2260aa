"""Question sets: CSV, JSONL and YAML read into the same questions, and every mistake reported at
its file:line:col with a fix, as `runner validate` reports a pipeline."""

from __future__ import annotations

from pathlib import Path

import pytest

from runner.eval.model import Gold
from runner.eval.questions import QuestionSetError, load_questions
from tests.eval.conftest import ROOT, write

CSV = """id,question,sources,answer,tags
carry,can I carry days over,annual-leave-policy.md#Carrying leave over|leave.md,days|year,leave|hr
notice,how much notice,annual-leave-policy.md,,leave
"""
JSONL = "\n".join(
    [
        '{"id": "carry", "question": "can I carry days over", "sources": '
        '["annual-leave-policy.md#Carrying leave over", "leave.md"], "answer": ["days", "year"], '
        '"tags": ["leave", "hr"]}',
        "",  # a blank line is skipped
        '{"id": "notice", "question": "how much notice", "sources": "annual-leave-policy.md", '
        '"tags": ["leave"]}',
    ]
)
YAML = """\
questions:
  - id: carry
    question: can I carry days over
    sources: [annual-leave-policy.md#Carrying leave over, leave.md]
    answer: [days, year]
    tags: [leave, hr]
  - id: notice
    question: how much notice
    sources: annual-leave-policy.md
    tags: [leave]
"""


def problems(path: Path) -> list[str]:
    with pytest.raises(QuestionSetError) as caught:
        load_questions(path)
    return [f"{d.line}:{d.col} {d.code} {d.message}" for d in caught.value.diagnostics]


@pytest.mark.parametrize(("name", "text"), [("q.csv", CSV), ("q.jsonl", JSONL), ("q.yaml", YAML)])
def test_the_three_formats_give_the_same_questions(tmp_path: Path, name: str, text: str) -> None:
    questions = load_questions(write(tmp_path / name, text)).questions
    assert [q.id for q in questions] == ["carry", "notice"]
    first = questions[0]
    assert first.sources == (
        Gold("annual-leave-policy.md", "Carrying leave over"),
        Gold("leave.md"),
    )
    assert first.answer == ("days", "year")
    assert first.tags == ("leave", "hr")
    assert questions[1].sources == (Gold("annual-leave-policy.md"),)


def test_a_question_without_an_id_is_named_by_its_row(tmp_path: Path) -> None:
    questions = load_questions(write(tmp_path / "q.csv", "question\nfirst\nsecond\n")).questions
    assert [q.id for q in questions] == ["q1", "q2"]
    assert [q.line for q in questions] == [2, 3]


def test_a_csv_line_starting_with_a_hash_is_a_comment(tmp_path: Path) -> None:
    text = "id,question\n# an example, to copy:\n#ex,How do I descale?\none,first\n"
    questions = load_questions(write(tmp_path / "q.csv", text)).questions
    assert [(question.id, question.question) for question in questions] == [("one", "first")]


def test_a_misspelt_csv_column_is_reported_with_its_column_and_a_suggestion(
    tmp_path: Path,
) -> None:
    found = problems(write(tmp_path / "q.csv", "id,question,soruces\na,b,c\n"))
    assert found == ["1:13 Q101 unknown column `soruces`; did you mean `sources`?"]


def test_an_empty_question_cell_is_reported_at_its_row_and_cell(tmp_path: Path) -> None:
    found = problems(write(tmp_path / "q.csv", "id,question\na,fine\nb,\n"))
    assert found == ["3:3 Q105 column `question`: the cell is empty"]


def test_a_source_that_is_not_document_or_document_heading_is_refused(tmp_path: Path) -> None:
    found = problems(write(tmp_path / "q.csv", 'question,sources\n"x, y",#Heading only\n'))
    assert found == [
        "2:8 Q105 column `sources`: `#Heading only` is not `document` or `document#heading`"
    ]


def test_a_csv_without_a_question_column_says_what_the_header_needs(tmp_path: Path) -> None:
    assert problems(write(tmp_path / "q.csv", "id,sources\na,b.md\n")) == [
        "1:1 Q102 the header has no `question` column"
    ]


def test_a_jsonl_line_that_is_not_json_is_reported_at_its_line_and_column(
    tmp_path: Path,
) -> None:
    found = problems(write(tmp_path / "q.jsonl", '{"question": "a"}\n{"question": "b",}\n'))
    assert found == [
        "2:18 Q104 this line is not a JSON object: Expecting property name "
        "enclosed in double quotes"
    ]


def test_a_jsonl_line_against_the_schema_is_located_on_its_line(tmp_path: Path) -> None:
    text = '{"question": "a"}\n{"question": "b", "tag": "x"}\n'
    found = problems(write(tmp_path / "q.jsonl", text))
    assert len(found) == 1
    assert found[0].startswith("2:19 S101 unknown key `tag`")
    assert "did you mean `tags`?" in found[0]


def test_a_yaml_question_without_its_question_is_located(tmp_path: Path) -> None:
    found = problems(write(tmp_path / "q.yaml", "- question: fine\n- id: two\n  tags: [a]\n"))
    assert len(found) == 1
    assert found[0].startswith("2:3 S102 ")
    assert "`question`" in found[0]


def test_two_questions_with_one_id_are_refused(tmp_path: Path) -> None:
    found = problems(write(tmp_path / "q.csv", "id,question\na,one\nb,two\na,three\n"))
    assert found == ["4:1 Q103 two questions have the id `a` (the first at line 2)"]


def test_an_unknown_file_kind_says_which_ones_are_read(tmp_path: Path) -> None:
    [problem] = problems(write(tmp_path / "q.txt", "question\n"))
    assert "Q100 `.txt` is not a question-set format" in problem


@pytest.mark.parametrize(
    "path",
    [ROOT / "pipelines/support/eval/questions.csv", ROOT / "pipelines/hr/eval/questions.yaml"],
)
def test_the_examples_question_sets_are_valid(path: Path) -> None:
    assert len(load_questions(path).questions) >= 10


def test_runner_schema_prints_the_question_set_schema() -> None:
    from click.testing import CliRunner

    from runner.cli import main

    printed = CliRunner().invoke(main, ["schema", "--kind", "questions"]).stdout
    assert printed == (ROOT / "schemas" / "questions.schema.json").read_text(encoding="utf-8")
