"""Every render and expression evaluation runs within a budget (runner/templating/budget.py): what
would exhaust the machine is refused with an error before it is built, and ordinary templates
render as before."""

from __future__ import annotations

from pathlib import Path

import jinja2
import pytest

from runner.config import load_pipeline
from runner.templating import environment as templates
from runner.templating.budget import LIMITS, RenderBudgetError
from runner.tools.base import ToolRunError, evaluate, render

BOMBS = {
    "repeated text": "{{ 'a' * 10**9 }}",
    "repeated list": "{{ [1] * 10**9 }}",
    "repetition the other way round": "{{ 10**9 * 'a' }}",
    "center filter": "{{ 'a'|center(2000000000) }}",
    "format filter width": "{{ '%2000000000s'|format('x') }}",
    "percent width": "{{ '%2000000000s' % 'x' }}",
    "percent star width": "{{ '%*s' % (10**9, 'x') }}",
    "str.format width": "{{ '{:>2000000000}'.format(1) }}",
    "str.format nested width": "{{ '{:{w}}'.format('x', w=10**9) }}",
    "ljust method": "{{ 'a'.ljust(10**9) }}",
    "indent filter": "{{ 'x'|indent(10**9) }}",
    "replace method": "{{ ('a' * 1000000).replace('a', 'a' * 1000000) }}",
    "join over an iterator": "{{ (' ' * 100000).join(range(100000)|map('string')) }}",
    "join filter separator": "{{ range(100000)|join('x' * 100000) }}",
    "batch padding": "{{ [1, 2]|batch(10**9, 0)|list }}",
    "slice count": "{{ [1]|slice(10**9)|list }}",
    "lipsum": "{{ lipsum(10**7) }}",
    "nested range loops": "{% for i in range(100000) %}{% for j in range(100000) %}"
    "{% endfor %}{% endfor %}",
    "nested loops over a list": "{% set xs = [0] * 100000 %}{% for a in xs %}{% for b in xs %}"
    "{% endfor %}{% endfor %}",
    "doubling by ~": "{% set ns = namespace(s='ab') %}{% for i in range(64) %}"
    "{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
    "doubling by +": "{% set ns = namespace(s='ab') %}{% for i in range(64) %}"
    "{% set ns.s = ns.s + ns.s %}{% endfor %}",
    "doubling a list in place": "{% set x = [1] %}{% for i in range(64) %}{{ x.extend(x) }}"
    "{% endfor %}",
    "output": "{% for i in range(100000) %}{{ 'a' * 1000 }}{% endfor %}",
    "power": "{{ 7 ** 1000000 }}",
    "endless macro": "{% macro f(n) %}{{ f(n) }}{% endmacro %}{{ f(1) }}",
    "endless recursive loop": "{% for x in [1, 2] recursive %}{{ loop([1, 2]) }}{% endfor %}",
}


BIG_BUT_WITHIN_BUDGET = "{% set x = 'a' * 6000000 %}{{ x|length }}"


@pytest.mark.parametrize("source", BOMBS.values(), ids=BOMBS.keys())
def test_a_template_that_would_exhaust_the_machine_is_stopped_by_its_budget(source: str) -> None:
    with pytest.raises(RenderBudgetError, match=r"budget|too deeply|bits"):
        templates.render(source, {})


@pytest.mark.parametrize(
    "expression", ["'a' * 10**9", "[1] * 10**9", "'x'|center(10**9)", "'%2000000000s' % 1"]
)
def test_an_expression_is_budgeted_too(expression: str) -> None:
    with pytest.raises(RenderBudgetError):
        templates.evaluate(expression, {})


def test_the_error_says_where_in_the_template() -> None:
    with pytest.raises(RenderBudgetError, match=r"\(template line 3\)"):
        templates.render("one\ntwo\n{{ 'a' * 10**9 }}\n", {})


def test_ordinary_templates_render_as_before() -> None:
    source = (
        "{{ '-' * 20 }}|{{ '%5s' % 'x' }}|{{ '{:>4}'.format(7) }}|{{ 'a'|center(5) }}|"
        "{% for p in passages %}{{ loop.index }}/{{ loop.length }} {{ p }};{% endfor %}|"
        "{{ passages|join(', ') }}|{{ 'ab' ~ 'cd' }}|{{ 2 ** 10 }}|{{ [1] + [2] }}"
    )
    assert templates.render(source, {"passages": ["a", "b"]}) == (
        "--------------------|    x|   7|  a  |1/2 a;2/2 b;|a, b|abcd|1024|[1, 2]"
    )


def test_each_render_has_a_budget_of_its_own() -> None:
    assert LIMITS.max_built < 2 * 6_000_000  # two of these would not fit in one budget
    for _ in range(3):
        assert templates.render(BIG_BUT_WITHIN_BUDGET, {}) == "6000000"


def test_a_large_payload_in_the_variables_is_data_not_template() -> None:
    message = "{{ 'a' * 10**9 }} " * 10_000 + "x" * 1_000_000
    assert templates.render("Q: {{ task }}", {"task": message}) == "Q: " + message


def test_concurrent_renders_do_not_share_a_budget() -> None:
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: templates.render(BIG_BUT_WITHIN_BUDGET, {}), range(4)))
    assert results == ["6000000"] * 4


# --- through a tool: the error names the tool and its template -----------------------------


@pytest.fixture
def tool_config(tmp_path: Path):  # type: ignore[no-untyped-def]
    path = tmp_path / "p.yaml"
    path.write_text(
        "domain: shop\ntools:\n  - name: faq\n    kind: prompt\n    prompt: Answer {{ task }}\n",
        encoding="utf-8",
    )
    return load_pipeline(path).tools[0]


def test_a_tool_template_over_budget_fails_naming_the_tool_and_the_template(tool_config) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ToolRunError, match=r"faq.*prompt template failed.*budget"):
        render(tool_config, "prompt", "{{ 'a'|center(2000000000) }}", {})


@pytest.mark.parametrize("label", ["relevant_if", "for_each"])
def test_a_relevant_if_or_for_each_over_budget_fails_naming_it(tool_config, label: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ToolRunError, match=rf"faq.*{label} expression.*budget"):
        evaluate(tool_config, label, "[1] * 10**9", {})


@pytest.mark.parametrize(
    ("source", "cause"),
    [("{{ 1 // 0 }}", "ZeroDivisionError"), ("{{ 3|map('x')|list }}", "TypeError")],
)
def test_a_runtime_error_in_a_template_names_the_tool_and_the_template(
    tool_config, source, cause
) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ToolRunError, match=rf"faq.*prompt template failed: {cause}"):
        render(tool_config, "prompt", source, {})


def test_a_runtime_error_in_an_expression_names_it(tool_config) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ToolRunError, match=r"faq.*relevant_if expression.*failed: TypeError"):
        evaluate(tool_config, "relevant_if", "100000|map('string')|list", {})


@pytest.mark.parametrize(
    "source",
    [
        "{% include '/etc/hostname' %}",
        "{% import '/etc/passwd' as x %}",
        "{% from 'x.j2' import y %}",
        "line one\n{% extends 'base.j2' %}",
    ],
)
def test_a_template_cannot_reach_another_file(source: str) -> None:
    with pytest.raises(jinja2.TemplateSyntaxError, match="cannot use another template file") as e:
        templates.render(source, {})
    assert e.value.lineno == source.count("\n") + 1
