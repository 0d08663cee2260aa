"""The one sandboxed Jinja environment every template and expression of runner goes through.

Sandboxed, because pipeline files may come from people we do not know; budgeted, so that no
template can exhaust the machine either (runner/templating/budget.py); StrictUndefined, because a
misspelt variable must fail loudly instead of rendering as an empty string.
"""

from __future__ import annotations

import json
import traceback
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from functools import cache, lru_cache
from typing import Any

from jinja2 import StrictUndefined, Template, TemplateSyntaxError, nodes
from jinja2.environment import TemplateExpression
from jinja2.lexer import describe_token
from jinja2.parser import Parser

from runner.templating import budget as render_budget
from runner.templating.budget import BudgetedEnvironment, RenderBudgetError
from runner.templating.outline import schema_outline

__all__ = ["RenderBudgetError", "environment", "evaluate", "render"]


def _to_json(value: Any, indent: int | None = None) -> str:
    return json.dumps(value, ensure_ascii=False, indent=indent, default=str)


_TAGS: dict[type[nodes.Node], str] = {
    nodes.Include: "include",
    nodes.Import: "import",
    nodes.FromImport: "from … import",
    nodes.Extends: "extends",
}


class _SelfContained(BudgetedEnvironment):
    """The environment has no loader: a template names no other file (what it could reach is
    no business of a pipeline's), so `{% include %}` and its kin are refused as it compiles,
    where `runner validate` sees it (R109), not at run time as "no loader"."""

    def _parse(self, source: str, name: str | None, filename: str | None) -> nodes.Template:
        tree = super()._parse(source, name, filename)
        for node in tree.find_all(tuple(_TAGS)):
            tag = _TAGS[type(node)]
            raise TemplateSyntaxError(
                f"`{{% {tag} %}}`: a template cannot use another template file; write what it "
                "needs into this one",
                node.lineno,
            )
        return tree


@cache
def environment() -> BudgetedEnvironment:
    env = _SelfContained(
        undefined=StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["tojson"] = _to_json
    env.filters["schema_outline"] = schema_outline  # a JSON Schema in few tokens (outline.py)
    render_budget.install(env)
    return env


@cache
def _compiled(source: str) -> Template:
    return environment().from_string(source)


def render(source: str, variables: Mapping[str, Any]) -> str:
    """Render template text, within a fresh render budget. Compiled templates are cached by
    their text. Raises a jinja2 TemplateError (RenderBudgetError past the budget)."""
    with render_budget.budgeted(), _budget_errors():
        return render_budget.render_counted(_compiled(source), variables)


@cache
def _compiled_expression(expression: str) -> TemplateExpression:
    return environment().compile_expression(expression, undefined_to_none=False)


def evaluate(expression: str, variables: Mapping[str, Any]) -> Any:
    """Evaluate a Jinja expression such as `params.products | length >= 2`, within a fresh
    render budget."""
    with render_budget.budgeted(), _budget_errors():
        return _compiled_expression(expression)(**variables)


@contextmanager
def _budget_errors() -> Iterator[None]:
    """A budget error says where in the template it happened; so does a recursion too deep
    (a macro or a recursive loop calling itself without end)."""
    try:
        yield
    except RenderBudgetError as error:
        raise RenderBudgetError(f"{error}{_template_line(error)}") from None
    except RecursionError:
        raise RenderBudgetError(
            "the template calls itself too deeply (a macro or a recursive loop without end)"
        ) from None


def _template_line(error: BaseException) -> str:
    """` (template line N)`, from the frames Jinja rewrites to point into the template."""
    lines = [
        frame.lineno
        for frame in traceback.extract_tb(error.__traceback__)
        if frame.filename == "<template>"
    ]
    return f" (template line {lines[-1]})" if lines else ""


# --- what a template reads (for `runner validate`) ---------------------------------------

# (name, line of first use) of each variable a template or expression reads without binding it.
Reads = tuple[tuple[str, int], ...]


@lru_cache(maxsize=4096)
def template_reads(source: str) -> Reads:
    """The variables a template reads and never binds, with the line of first use, in order of
    use. Cached by text: a template file shared by many pipelines is analysed once.

    Raises TemplateSyntaxError."""
    return _FreeNames.of(environment().parse(source))


@lru_cache(maxsize=4096)
def expression_reads(expression: str) -> Reads:
    """The variables an expression such as `params.products | length >= 2` reads.

    Raises TemplateSyntaxError, also for template syntax smuggled into it (`a }}{{ b`)."""
    return _FreeNames.of(parse_expression(expression))


def template_variables(source: str) -> set[str]:
    """The variables a template reads and never binds. Raises TemplateSyntaxError."""
    return {name for name, _ in template_reads(source)}


def expression_variables(expression: str) -> set[str]:
    """The variables an expression reads. Raises TemplateSyntaxError."""
    return {name for name, _ in expression_reads(expression)}


def parse_expression(expression: str) -> nodes.Expr:
    """One Jinja expression, parsed exactly as `evaluate` (compile_expression) parses it, so
    anything after the expression is an error rather than more template."""
    parser = Parser(environment(), expression, state="variable")
    parsed = parser.parse_expression()
    if not parser.stream.eos:
        current = parser.stream.current
        raise TemplateSyntaxError(f"unexpected {describe_token(current)!r}", current.lineno)
    return parsed


class _FreeNames:
    """Walks a syntax tree in order, keeping Jinja's scopes: a name is free when it is read
    before anything binds it in its scope.

    Read from the syntax tree alone: jinja2.meta runs the code generator, which takes about seven
    times as long as this walk (bench: the shipped templates), and reports a name set inside
    `{% if %}` as undeclared. Where
    Jinja is unsure, this is lenient: a name set in any branch of an `if` counts as bound after
    it (a `for`, `macro`, `with` or `call` body keeps its own bindings, as in Jinja)."""

    def __init__(self) -> None:
        self.reads: dict[str, int] = {}

    @classmethod
    def of(cls, tree: nodes.Node) -> Reads:
        walker = cls()
        walker.visit(tree, {"self", *environment().globals})
        ordered = sorted(walker.reads.items(), key=lambda item: (item[1], item[0]))
        return tuple(ordered)

    def visit(self, node: nodes.Node, scope: set[str]) -> None:
        handler = getattr(self, f"visit_{type(node).__name__}", None)
        if handler is not None:
            handler(node, scope)
        else:
            self.body(node.iter_child_nodes(), scope)

    def body(self, statements: Iterable[nodes.Node], scope: set[str]) -> None:
        for statement in statements:
            self.visit(statement, scope)

    def read(self, name: str, line: int, scope: set[str]) -> None:
        if name not in scope:
            self.reads.setdefault(name, line)

    def bind(self, target: nodes.Node, scope: set[str]) -> None:
        """`{% set ns.attr = … %}` reads the namespace; any other target binds its names."""
        if isinstance(target, nodes.NSRef):
            self.read(target.name, target.lineno, scope)
        else:
            scope.update(_names(target))

    def visit_Name(self, node: nodes.Name, scope: set[str]) -> None:
        if node.ctx == "load":
            self.read(node.name, node.lineno, scope)

    def visit_NSRef(self, node: nodes.NSRef, scope: set[str]) -> None:
        self.read(node.name, node.lineno, scope)

    def visit_Assign(self, node: nodes.Assign, scope: set[str]) -> None:
        self.visit(node.node, scope)
        self.bind(node.target, scope)

    def visit_AssignBlock(self, node: nodes.AssignBlock, scope: set[str]) -> None:
        self.body(node.body, set(scope))
        if node.filter is not None:
            self.visit(node.filter, scope)
        self.bind(node.target, scope)

    def visit_If(self, node: nodes.If, scope: set[str]) -> None:
        self.visit(node.test, scope)
        bound: set[str] = set()
        branches: list[Iterable[nodes.Node]] = [node.body, *([e] for e in node.elif_), node.else_]
        for branch in branches:
            inner = set(scope)
            self.body(branch, inner)
            bound |= inner
        scope |= bound

    def visit_For(self, node: nodes.For, scope: set[str]) -> None:
        self.visit(node.iter, scope)
        inner = scope | _names(node.target) | {"loop"}
        if node.test is not None:
            self.visit(node.test, inner)
        self.body(node.body, inner)
        self.body(node.else_, set(scope))

    def visit_Macro(self, node: nodes.Macro, scope: set[str]) -> None:
        scope.add(node.name)
        self.body(node.defaults, scope)
        inner = scope | _names(*node.args) | {"varargs", "kwargs", "caller"}
        self.body(node.body, inner)

    def visit_CallBlock(self, node: nodes.CallBlock, scope: set[str]) -> None:
        self.visit(node.call, scope)
        self.body(node.defaults, scope)
        self.body(node.body, scope | _names(*node.args) | {"varargs", "kwargs"})

    def visit_With(self, node: nodes.With, scope: set[str]) -> None:
        self.body(node.values, scope)
        self.body(node.body, scope | _names(*node.targets))

    def visit_Block(self, node: nodes.Block, scope: set[str]) -> None:
        self.body(node.body, scope | {"super"})

    def visit_Scope(self, node: nodes.Scope, scope: set[str]) -> None:
        self.body(node.body, set(scope))

    def visit_Import(self, node: nodes.Import, scope: set[str]) -> None:
        self.visit(node.template, scope)
        scope.add(node.target)

    def visit_FromImport(self, node: nodes.FromImport, scope: set[str]) -> None:
        self.visit(node.template, scope)
        scope.update(name if isinstance(name, str) else name[1] for name in node.names)


def _names(*targets: nodes.Node) -> set[str]:
    """The names an assignment target (`x`, `a, b`) or a parameter list binds."""
    names: set[str] = set()
    for target in targets:
        found = target.find_all(nodes.Name)  # descendants only: `x` is a Name itself
        names.update(name.name for name in (target, *found) if isinstance(name, nodes.Name))
    return names
