"""A specification table's columns are models (codes): a question naming a model is answered
with that model's column of a row (docs/offline.md, "Writing answers": rows of a specification
table; that a row of other models' tables is not quoted is tested on the support example, in
tests/testing/test_demo_table_rows.py). Texts written here; the passages go through the real
Prompts and client, as a pipeline's do."""

from __future__ import annotations

from runner.llm.units.rows import for_codes, row_fields

from .test_offline_answers import answer, page

WASHERS = page(
    "## Technical specifications\n\n"
    "| Specification | WM-100 | WM-200 | WM-300 |\n|---|---|---|---|\n"
    "| Spin speed | 1200 rpm | 1400 rpm | 1600 rpm |\n"
    "| Standard warranty | 2 years | 2 years | 3 years |\n",
    "washers.md",
    22,
)


def test_a_row_read_for_a_code_keeps_its_label_and_that_code_s_column() -> None:
    fields = row_fields(
        ["Spin speed", "1200 rpm", "1400 rpm"], ["Specification", "WM-100", "WM-200"]
    )
    assert for_codes(fields, {"wm-200"}) == "Spin speed — WM-200: 1400 rpm."
    assert for_codes(fields, {"xx-1"}) is None


def test_a_question_naming_a_model_is_answered_with_its_column() -> None:
    said = answer("What is the warranty on the WM-300?", WASHERS)
    assert said == "Standard warranty — WM-300: 3 years. [washers.md p. 22]"


def test_a_question_naming_no_model_gets_the_whole_row() -> None:
    said = answer("What is the standard warranty of the washers?", WASHERS)
    assert "WM-100: 2 years; WM-200: 2 years; WM-300: 3 years" in said
