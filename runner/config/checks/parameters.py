"""Parameters a declarative coordinator's expressions read that its extraction may leave out
(R126, a warning).

An extraction schema lists in `required` what every reply has; any other parameter may be
missing from a reply. At run time a missing parameter reads as undefined: false, empty, of
length 0 (runner/tools/declarative.py), so `params.products | length >= 2` is simply false. That
is usually what the author means, but not always, so validation says where it can happen. A read
that already says what a missing value means is left alone: one under `| default(...)`, tested
with `is defined` / `is undefined`, used as a truth value (`params.x`, `not params.x`, an
`{% if %}` test), or looped over (`for_each: params.x`, `{% for p in params.x %}`). The rest
of the block runs only once `relevant_if` held, so the parameters that rule reads count as
checked there.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from jinja2 import TemplateSyntaxError, nodes
from jinja2.parser import Parser

from runner.config.checks.context import Checks
from runner.config.checks.extraction import parameter_schema, required_parameters
from runner.config.checks.templates import column_of, inline_line
from runner.documents.diagnostics import KeyPath, value_at
from runner.templating.environment import environment, parse_expression

_GUARD_FILTERS = frozenset({"default", "d"})
_GUARD_TESTS = frozenset({"defined", "undefined", "none"})


def unrequired_parameters(checks: Checks) -> None:
    for path, tool in checks.tool_items():
        decompose = tool.get("decompose")
        if decompose is None:
            continue
        block = (*path, "decompose")
        required = _required(checks, block, decompose)
        if required is None:
            continue  # R113 reported the schema
        gated = _relevance_reads(decompose.get("relevant_if"))
        for where, is_expression in _places(checks, block, decompose):
            known = required if where[-1] == "relevant_if" else required | gated
            for name, lineno in _parameter_reads(value_at(checks.data, where), is_expression):
                if name not in known:
                    _report(checks, where, is_expression, name, lineno, "extract" in decompose)


def _required(checks: Checks, block: KeyPath, decompose: Mapping[str, Any]) -> set[str] | None:
    """What every extraction reply has: nothing without `extract`; None for a broken schema."""
    if "extract" not in decompose:
        return set()
    schema = parameter_schema(checks, (*block, "extract"))
    return None if schema is None else required_parameters(schema)


def _relevance_reads(relevant_if: str | None) -> set[str]:
    """The parameters the relevance rule reads. The rest of the block runs only once the rule
    held, so there they count as checked (`params.products | default([]) | length >= 2` holds
    only for a list of two)."""
    if relevant_if is None:
        return set()
    try:
        tree = parse_expression(relevant_if)
    except TemplateSyntaxError:
        return set()
    return {
        name
        for node in (tree, *tree.find_all((nodes.Getattr, nodes.Getitem)))
        if (name := _parameter_name(node)) is not None
    }


def _places(
    checks: Checks, block: KeyPath, decompose: Mapping[str, Any]
) -> Iterator[tuple[KeyPath, bool]]:
    """Each expression (True) and template (False) of the block that receives `params`."""
    if "relevant_if" in decompose:
        yield (*block, "relevant_if"), True
    if "append_prompt" in decompose:
        yield (*block, "append_prompt"), False
    for index, subtask in enumerate(decompose.get("subtasks", ())):
        place = (*block, "subtasks", index)
        if "for_each" in subtask:
            yield (*place, "for_each"), True
        yield (*place, "prompt"), False
        if "id" in subtask:
            yield (*place, "id"), False


def _parameter_reads(source: str, is_expression: bool) -> list[tuple[str, int]]:
    """(name, line) of each unguarded `params.<name>` / `params['<name>']` read, first use."""
    try:
        # the template as written: Parser, not environment().parse, which adds the render
        # budget's own nodes around loops and `~`
        tree = parse_expression(source) if is_expression else Parser(environment(), source).parse()
    except TemplateSyntaxError:
        return []  # R109 / R111 reported it
    reads: dict[str, int] = {}
    # the whole expression used as a truth value (`relevant_if: params.products`) is a guard
    guarded = is_expression and _parameter_name(tree) is not None
    for node, name in _reads(tree, guarded, frozenset()):
        reads.setdefault(name, node.lineno)
    return list(reads.items())


def _reads(
    node: nodes.Node, guarded: bool, known: frozenset[str]
) -> Iterator[tuple[nodes.Node, str]]:
    """The unguarded parameter reads below `node`; `known` holds the parameters an enclosing
    `and` / `if` has already tested (`params.x is defined and params.x | length > 1`)."""
    name = _parameter_name(node)
    if name is not None:
        if not guarded and name not in known:
            yield node, name
        return
    if isinstance(node, nodes.And):
        yield from _reads(node.left, True, known)
        yield from _reads(node.right, True, known | _tested(node.left))
        return
    if isinstance(node, (nodes.If, nodes.CondExpr)):
        then = node.body if isinstance(node, nodes.If) else [node.expr1]
        otherwise = [*node.elif_, *node.else_] if isinstance(node, nodes.If) else [node.expr2]
        yield from _reads(node.test, True, known)
        for child in then:
            yield from _reads(child, False, known | _tested(node.test))
        for other in otherwise:
            if other is not None:
                yield from _reads(other, False, known)
        return
    for child, child_guarded in _children(node):
        yield from _reads(child, child_guarded, known)


def _tested(test: nodes.Node) -> frozenset[str]:
    """The parameters a condition establishes as present when it holds: `params.x`,
    `params.x is defined`, and `and`s of those."""
    name = _parameter_name(test)
    if name is not None:
        return frozenset({name})
    if isinstance(test, nodes.Test) and test.name == "defined":
        return _tested(test.node)
    if isinstance(test, nodes.And):
        return _tested(test.left) | _tested(test.right)
    return frozenset()


def _children(node: nodes.Node) -> Iterator[tuple[nodes.Node, bool]]:
    """Each child node, and whether a missing parameter read right there is already handled."""
    guards: set[int] = set()
    if isinstance(node, nodes.Filter) and node.name in _GUARD_FILTERS and node.node is not None:
        guards.add(id(node.node))
    if isinstance(node, nodes.Test) and node.name in _GUARD_TESTS:
        guards.add(id(node.node))
    if isinstance(node, (nodes.Not, nodes.Or)):  # used as truth values
        guards |= {id(child) for child in node.iter_child_nodes()}
    if isinstance(node, nodes.For):  # a loop over it: no items when it is missing, as for_each
        guards.add(id(node.iter))
    for child in node.iter_child_nodes():
        yield child, id(child) in guards


def _parameter_name(node: nodes.Node) -> str | None:
    """`products` for `params.products` or `params['products']`, else None."""
    if isinstance(node, nodes.Getattr) and _is_params(node.node):
        return node.attr
    if (
        isinstance(node, nodes.Getitem)
        and _is_params(node.node)
        and isinstance(node.arg, nodes.Const)
        and isinstance(node.arg.value, str)
    ):
        return node.arg.value
    return None


def _is_params(node: nodes.Node) -> bool:
    return isinstance(node, nodes.Name) and node.name == "params" and node.ctx == "load"


def _report(
    checks: Checks, where: KeyPath, is_expression: bool, name: str, lineno: int, extracts: bool
) -> None:
    read = f"params.{name}"
    if is_expression:
        position = checks.document.position(where)
        line = position.line
        col = column_of(read, checks.line_text(line), start=position.col - 1) or position.col
    else:
        line, col = inline_line(checks, where, lineno, read)
    if extracts:
        message = (
            f"`{read}` is not in the extraction schema's `required`, so a reply may leave it "
            "out; it then reads as undefined (false, empty, length 0)"
        )
        hint = (
            f"add `{name}` to `required` under extract.schema, or say what a missing value "
            f"means: `{read} | default([])`, `{read} is defined`"
        )
    else:
        message = f"`{read}` is always undefined here: this decompose block has no `extract`"
        hint = f"add an `extract:` block whose schema has `{name}`"
    checks.emit_at("R126", message, checks.document.path, line, col, where, hint=hint, warning=True)
