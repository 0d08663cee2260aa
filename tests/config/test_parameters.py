"""R126: a decomposition's expression or template reads a parameter that the extraction
schema does not require, so a reply may leave it out (it then reads as undefined at run time)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from runner.config import validate_file

COORDINATOR = """\
domain: shop
tools:
  - name: compare
    kind: prompt
    prompt: "Compare {{{{ task }}}}"
    decompose:
      extract:
        schema:
          type: object
          properties:
            products: {{type: array, items: {{type: string}}}}
            model: {{type: string}}
          required: {required}
      relevant_if: "{relevant_if}"
      subtasks:
        - for_each: {for_each}
          prompt: "{prompt}"
"""


def warnings(
    write_pipeline: Callable[..., Path],
    relevant_if: str = "params.products | length >= 2",
    required: str = "[]",
    for_each: str = "params.products",
    prompt: str = "Specs of {{ item }}?",
) -> list[tuple[int, int, str]]:
    text = COORDINATOR.format(
        relevant_if=relevant_if, required=required, for_each=for_each, prompt=prompt
    )
    report = validate_file(write_pipeline(text))
    assert report.errors == []
    return [(d.line, d.col, d.message) for d in report.warnings if d.code == "R126"]


def test_r126_a_relevance_rule_reading_an_unrequired_parameter_is_warned_where_it_reads_it(
    write_pipeline: Callable[..., Path],
) -> None:
    [(line, col, message)] = warnings(write_pipeline)
    assert (line, col) == (14, 21)  # at `params.products`, inside the quotes
    assert message.startswith("`params.products` is not in the extraction schema's `required`")
    assert "it then reads as undefined (false, empty, length 0)" in message


def test_r126_a_required_parameter_is_not_warned(write_pipeline: Callable[..., Path]) -> None:
    assert warnings(write_pipeline, required="[products]") == []


@pytest.mark.parametrize(
    "relevant_if",
    [
        "params.products | default([]) | length >= 2",
        "params.products is defined and params.products | length >= 2",
        "params.products",
        "not params.products",
        "'x' if params.products else 'y'",
    ],
)
def test_r126_a_read_that_says_what_missing_means_is_not_warned(
    write_pipeline: Callable[..., Path], relevant_if: str
) -> None:
    assert warnings(write_pipeline, relevant_if=relevant_if) == []


def test_r126_a_template_loop_over_a_parameter_is_not_warned_like_for_each(
    write_pipeline: Callable[..., Path],
) -> None:
    """A loop over a missing list makes no items, in a template as in `for_each`; what the
    loop body does with other parameters is still checked."""
    found = warnings(
        write_pipeline,
        relevant_if="params.model is defined",
        prompt="Specs of {% for p in params.products %}{{ p }}{{ params.size }}{% endfor %}?",
    )
    assert [message.split("`")[1] for _, _, message in found] == ["params.size"]


def test_r126_subtask_templates_and_loops_are_checked_too(
    write_pipeline: Callable[..., Path],
) -> None:
    found = warnings(
        write_pipeline,
        relevant_if="params.products",
        for_each="\"params.products | select('ne', params.model) | list\"",
        prompt="Specs of {{ item }} against {{ params.model }}?",
    )
    assert [(line, message.split("`")[1]) for line, _, message in found] == [
        (16, "params.model"),
        (17, "params.model"),
    ]


def test_r126_what_the_relevance_rule_reads_counts_as_checked_in_the_rest_of_the_block(
    write_pipeline: Callable[..., Path],
) -> None:
    found = warnings(write_pipeline, prompt="Specs of {{ item }} ({{ params.products | length }})")
    assert [line for line, _, _ in found] == [14]  # relevant_if only, not the subtask prompt


def test_r126_a_decomposition_without_extract_reads_parameters_that_never_exist(
    write_pipeline: Callable[..., Path],
) -> None:
    text = """\
domain: shop
tools:
  - name: compare
    kind: prompt
    prompt: "Compare {{ task }}"
    decompose:
      relevant_if: "params.products | length >= 2"
      subtasks:
        - prompt: "Specs?"
"""
    [warning] = validate_file(write_pipeline(text)).warnings
    assert (warning.code, warning.line, warning.col) == ("R126", 7, 21)
    assert "always undefined here: this decompose block has no `extract`" in warning.message


def test_a_schema_r113_rejected_is_not_read_for_r126(write_pipeline: Callable[..., Path]) -> None:
    text = COORDINATOR.format(
        relevant_if="params.products | length >= 2",
        required="3",
        for_each="params.products",
        prompt="x",
    )
    report = validate_file(write_pipeline(text))
    assert [d.code for d in report.diagnostics] == ["R113"]
