"""The one template analyser (runner.templating.environment) `runner validate` uses: R109-R112."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from jinja2 import TemplateSyntaxError

from runner.config import validate_file
from runner.templating import environment as templates

from .helpers import BASE


def codes(path: Path) -> list[str]:
    return [d.code for d in validate_file(path).diagnostics]


def with_prompt(template: str) -> str:
    return BASE.replace('"Answer {{ task }}"', f"'{template}'")


def test_an_expression_followed_by_template_syntax_is_a_syntax_error() -> None:
    with pytest.raises(TemplateSyntaxError):
        templates.expression_variables("a }}{{ b")


def test_an_expression_reports_the_variables_it_reads() -> None:
    assert templates.expression_variables("params.products | length >= n") == {"params", "n"}


def test_a_variable_set_inside_if_is_bound_after_it() -> None:
    source = "{% if a %}{% set y = 1 %}{% endif %}{{ y }}"
    assert templates.template_variables(source) == {"a"}


def test_a_variable_set_inside_if_is_bound_inside_it() -> None:
    assert templates.template_variables("{% if a %}{% set y = 1 %}{{ y }}{% endif %}") == {"a"}


def test_a_variable_read_before_its_set_is_free() -> None:
    assert templates.template_variables("{{ y }}{% set y = 1 %}") == {"y"}


def test_a_variable_set_inside_a_loop_does_not_leave_it() -> None:
    source = "{% for x in xs %}{% set z = x %}{{ z }}{% endfor %}{{ z }}"
    assert templates.template_variables(source) == {"xs", "z"}


def test_loop_is_bound_only_inside_a_for() -> None:
    source = "{% for x in xs %}{{ loop.index }}{{ x }}{% endfor %}{{ loop }}"
    assert templates.template_reads(source) == (("loop", 1), ("xs", 1))


def test_macro_parameters_with_and_namespaces_bind_their_names() -> None:
    source = (
        "{% macro item(name, sep=divider) %}{{ name }}{{ sep }}{% endmacro %}"
        "{% set ns = namespace(count=0) %}{% set ns.count = 1 %}"
        "{% with total = ns.count %}{{ item(total) }}{% endwith %}{{ range(2) }}"
    )
    assert templates.template_variables(source) == {"divider"}


def test_reads_give_the_line_of_first_use() -> None:
    assert templates.template_reads("{{ a }}\n{{ b }}\n{{ a }}") == (("a", 1), ("b", 2))


def test_validate_accepts_a_variable_set_inside_if(write_pipeline: Callable[..., Path]) -> None:
    prompt = "{% if params %}{% set who = params.name %}{% endif %}Hello {{ who }}"
    assert codes(write_pipeline(with_prompt(prompt))) == []


def test_validate_reports_a_variable_only_set_inside_a_loop(
    write_pipeline: Callable[..., Path],
) -> None:
    prompt = "{% for p in params %}{% set last = p %}{% endfor %}{{ last }}"
    assert codes(write_pipeline(with_prompt(prompt))) == ["R110"]
