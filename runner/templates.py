"""The one sandboxed Jinja environment every template and expression of runner goes through.

Sandboxed, because pipeline files may come from people we do not know; StrictUndefined, because
a misspelt variable must fail loudly instead of rendering as an empty string.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from typing import Any

from jinja2 import StrictUndefined, meta, nodes
from jinja2.sandbox import SandboxedEnvironment


def _to_json(value: Any, indent: int | None = None) -> str:
    return json.dumps(value, ensure_ascii=False, indent=indent, default=str)


@cache
def environment() -> SandboxedEnvironment:
    env = SandboxedEnvironment(
        undefined=StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["tojson"] = _to_json
    return env


@cache
def _compiled(source: str):  # type: ignore[no-untyped-def]
    return environment().from_string(source)


def render(source: str, variables: Mapping[str, Any]) -> str:
    """Render template text. Compiled templates are cached by their text."""
    return _compiled(source).render(**variables)


@cache
def _compiled_expression(expression: str):  # type: ignore[no-untyped-def]
    return environment().compile_expression(expression, undefined_to_none=False)


def evaluate(expression: str, variables: Mapping[str, Any]) -> Any:
    """Evaluate a Jinja expression such as `params.products | length >= 2`."""
    return _compiled_expression(expression)(**variables)


def template_variables(source: str) -> set[str]:
    """The top-level variables a template reads (for `runner validate`).

    Raises TemplateSyntaxError."""
    return meta.find_undeclared_variables(environment().parse(source))


def expression_variables(expression: str) -> set[str]:
    """The top-level variables an expression reads. Raises TemplateSyntaxError."""
    env = environment()
    parser_source = "{{ " + expression + " }}"
    ast = env.parse(parser_source)
    # an expression must be exactly one output node, or it smuggled in template syntax
    if len(ast.body) != 1 or not isinstance(ast.body[0], nodes.Output):
        from jinja2 import TemplateSyntaxError

        raise TemplateSyntaxError("not a single expression", 1)
    return meta.find_undeclared_variables(ast)
