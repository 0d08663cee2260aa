"""What one render of a template may build: the sandbox stops code, this stops exhaustion.

Jinja's sandbox keeps templates away from Python's insides, but not from the machine:
`{{ 'a' * 10**9 }}`, `'a'|center(2000000000)`, `'%2000000000s'|format` or two nested
`range(100000)` loops each ran past 20 s or 1 GB. Every render (and every expression evaluation)
gets a budget, held in a context variable so concurrent rounds never share one:

- *built*: the characters and items that repetition, padding, format widths, joins, replacements,
  concatenation and list growth make, summed over the render; checked before the big operations
  run, so `'a' * 10**9` is refused without being built;
- *iterations*: loop iterations and `range()` items, summed over nested loops;
- *output*: the characters the render writes;
- *numbers*: `**` whose result would have more than a few thousand digits.

A render over its budget raises RenderBudgetError (a jinja2 TemplateError, so every caller that
names its template names it here too). The limits are in docs/validate.md.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable, Iterator, Mapping, Sized
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from jinja2 import Template, TemplateRuntimeError, nodes, pass_eval_context
from jinja2 import filters as jinja_filters
from jinja2.sandbox import SandboxedEnvironment
from jinja2.utils import generate_lorem_ipsum


@dataclass(frozen=True)
class RenderLimits:
    """What one render may make, loop, write and compute before it is stopped."""

    max_built: int = 10_000_000  # characters or items made, over the whole render
    max_iterations: int = 1_000_000  # loop iterations and range() items, over the whole render
    max_output: int = 4_000_000  # characters written (~1M tokens: beyond any model's window)
    max_number_bits: int = 20_000  # `**` results (about 6,000 digits)


LIMITS = RenderLimits()


class RenderBudgetError(TemplateRuntimeError):
    """A render that would exceed its budget; the message says which part and why."""


class RenderBudget:
    def __init__(self, limits: RenderLimits = LIMITS) -> None:
        self.limits = limits
        self.built = 0
        self.iterations = 0
        self.output = 0

    def build(self, size: int, what: str) -> None:
        self.built += max(size, 0)
        if self.built > self.limits.max_built:
            raise RenderBudgetError(
                f"{what} would take the render past its budget of {self.limits.max_built:,} "
                "characters or items built (repetition, padding, widths, joins and "
                "concatenation all count)"
            )

    def iterate(self, count: int, what: str) -> None:
        self.iterations += count
        if self.iterations > self.limits.max_iterations:
            raise RenderBudgetError(
                f"{what} takes the render past its budget of "
                f"{self.limits.max_iterations:,} loop iterations (nested loops multiply)"
            )

    def write(self, size: int) -> None:
        self.output += size
        if self.output > self.limits.max_output:
            raise RenderBudgetError(
                f"the render writes more than its budget of {self.limits.max_output:,} characters"
            )


# The budget of the render under way. A context variable because Jinja calls the sandbox's
# hooks (`call_binop`, `call`, `wrap_str_format`) and runner's filters with its own arguments:
# nothing of ours can ride along from `render` to them.
_ACTIVE: ContextVar[RenderBudget | None] = ContextVar("render_budget", default=None)


def current() -> RenderBudget:
    """The budget of the render under way; outside one, a fresh budget for the one operation."""
    return _ACTIVE.get() or RenderBudget()


@contextmanager
def budgeted(limits: RenderLimits = LIMITS) -> Iterator[RenderBudget]:
    """A fresh budget for everything rendered or evaluated inside the block."""
    budget = RenderBudget(limits)
    token = _ACTIVE.set(budget)
    try:
        yield budget
    finally:
        _ACTIVE.reset(token)


def render_counted(template: Template, variables: Mapping[str, Any]) -> str:
    """Render a compiled template as Template.render does, charging what it writes to the
    output budget as it goes (a render that writes too much stops there)."""
    budget, parts, written = current(), [], 0
    limit = budget.limits.max_output
    context = template.new_context(dict(variables))
    try:
        for chunk in template.root_render_func(context):
            written += len(chunk)
            if written > limit:
                budget.write(written)  # raises
            parts.append(chunk)
    except Exception:
        template.environment.handle_exception()  # points the traceback into the template
    budget.output = written
    return "".join(parts)


# --- the environment --------------------------------------------------------------------


class BudgetedEnvironment(SandboxedEnvironment):
    """The sandbox, with every way of building much from little charged to the budget."""

    intercepted_binops = frozenset(["*", "**", "+", "%"])

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        if operator == "*":
            _check_repetition(left, right)
        elif operator == "**":
            _check_power(left, right)
        elif operator == "%" and isinstance(left, str):
            _check_printf(left, right)
        result = self.binop_table[operator](left, right)
        if operator == "+" and isinstance(result, str | list | tuple):
            current().build(len(result), "`+`")
        return result

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        args = _check_method_call(__obj, args, kwargs)
        return super().call(__context, __obj, *args, **kwargs)

    def wrap_str_format(self, value: Any) -> Any:
        """`text.format(…)` and `text.format_map(…)`, which the sandbox wraps itself."""
        wrapped = super().wrap_str_format(value)
        if wrapped is None:
            return None
        template, is_map = value.__self__, value.__name__ == "format_map"

        def checked(*args: Any, **kwargs: Any) -> str:
            mapping = args[0] if is_map and args and isinstance(args[0], Mapping) else kwargs
            _check_str_format(template, () if is_map else args, mapping)
            return str(wrapped(*args, **kwargs))

        return checked

    def _parse(self, source: str, name: str | None, filename: str | None) -> nodes.Template:
        tree = super()._parse(source, name, filename)
        _guard(tree)
        tree.set_environment(self)
        return tree


def install(env: BudgetedEnvironment) -> None:
    """Replace the filters and globals that amplify with budgeted ones."""
    env.filters.update(
        center=_center,
        indent=_indent,
        format=_format,
        replace=_replace,
        join=_join,
        batch=_batch,
        slice=_slice,
    )
    env.globals.update(range=_range, lipsum=_lipsum)
    # what _guard puts into every template; filters, because the compiled code calls them
    # directly, without the sandbox's checks of a call
    env.filters.update({_LOOP_FILTER: _Counted, _CONCAT_FILTER: _charged_concat})


_LOOP_FILTER, _CONCAT_FILTER = "runner_budget_loop", "runner_budget_concat"


def _charged_concat(text: Any) -> Any:
    current().build(len(text), "`~`")
    return text


def _guard(node: nodes.Node) -> None:
    """Count every `for` loop's iterations and charge every `~`, by rewriting the syntax tree
    before it is compiled: `for x in items` becomes `for x in items|runner_budget_loop`."""
    for field, value in node.iter_fields():
        if isinstance(value, nodes.Node):
            _guard(value)
            setattr(node, field, _guarded(value))
        elif isinstance(value, list):
            for child in value:
                if isinstance(child, nodes.Node):
                    _guard(child)
            setattr(node, field, [_guarded(v) if isinstance(v, nodes.Node) else v for v in value])
    if isinstance(node, nodes.For):
        node.iter = _budget_filter(_LOOP_FILTER, node.iter)


def _guarded(node: nodes.Node) -> nodes.Node:
    return _budget_filter(_CONCAT_FILTER, node) if isinstance(node, nodes.Concat) else node


def _budget_filter(name: str, argument: nodes.Node) -> nodes.Filter:
    return nodes.Filter(argument, name, [], [], None, None, lineno=argument.lineno)


class _Counted:
    """A loop's iterable: each item taken is an iteration of the budget; its length (for
    `loop.length`) is the iterable's own."""

    def __init__(self, iterable: Any) -> None:
        self.iterable = iterable

    def __iter__(self) -> Iterator[Any]:
        budget = current()
        for item in self.iterable:
            budget.iterate(1, "a `for` loop")
            yield item

    def __len__(self) -> int:
        return len(self.iterable)


# --- checks before an operation builds anything -------------------------------------------


def _check_repetition(left: Any, right: Any) -> None:
    for sequence, times in ((left, right), (right, left)):
        if isinstance(sequence, str | list | tuple) and isinstance(times, int):
            current().build(len(sequence) * times, "`*` repetition")


def _check_power(base: Any, exponent: Any) -> None:
    if not (isinstance(base, int) and isinstance(exponent, int) and exponent > 0):
        return
    if abs(base) > 1 and abs(base).bit_length() * exponent > current().limits.max_number_bits:
        raise RenderBudgetError(
            f"`{base} ** {exponent}` would be a number of more than "
            f"{current().limits.max_number_bits:,} bits; use smaller numbers"
        )


_PRINTF = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(\*|\d+)?(?:\.(\*|\d+))?")


def _check_printf(template: str, arguments: Any) -> None:
    """`'%2000000000s' % x`: widths and precisions, written or taken from the arguments (`*`)."""
    values = arguments if isinstance(arguments, tuple) else (arguments,)
    widths: list[int] = []
    for match in _PRINTF.finditer(template):
        for part in match.groups():
            if part == "*":
                widths.extend(value for value in values if isinstance(value, int))
            elif part:
                widths.append(int(part))
    _charge_widths(widths, "a `%` format width")


_SPEC_NUMBERS = re.compile(r"\d+")


def _check_str_format(template: str, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> None:
    """`'{:>2000000000}'.format(x)`: the numbers of every format spec (and, for a nested
    spec such as `{:{width}}`, every number passed)."""
    widths: list[int] = []
    try:
        fields = list(string.Formatter().parse(template))
    except ValueError:
        return  # str.format raises the same error itself
    for _, _, spec, _ in fields:
        if not spec:
            continue
        widths.extend(int(number) for number in _SPEC_NUMBERS.findall(spec))
        if "{" in spec:
            passed = [*args, *kwargs.values()]
            widths.extend(value for value in passed if isinstance(value, int))
    _charge_widths(widths, "a format width")


def _charge_widths(widths: list[int], what: str) -> None:
    if widths:
        current().build(max(widths), what)


_PADDING_METHODS = {"center", "ljust", "rjust", "zfill"}
_GROWING_METHODS = {"append", "insert", "add", "setdefault"}


def _check_method_call(
    function: Any, args: tuple[Any, ...], kwargs: Mapping[str, Any]
) -> tuple[Any, ...]:
    """Methods of texts, lists, dicts and sets reached from a template (`x.ljust(10**9)`);
    returns the arguments to call with (an iterator to join is taken into a list first)."""
    owner = getattr(function, "__self__", None)
    name = getattr(function, "__name__", "")
    budget = current()
    if isinstance(owner, str):
        if name in _PADDING_METHODS and args and isinstance(args[0], int):
            budget.build(args[0], f"`{name}()`")
        elif name == "expandtabs":
            size = args[0] if args and isinstance(args[0], int) else 8
            budget.build(owner.count("\t") * size, "`expandtabs()`")
        elif name == "replace" and len(args) >= 2:
            budget.build(_replaced_size(owner, args[0], args[1], _arg(args, 2)), "`replace()`")
        elif name == "join" and args:
            items = _sized(args[0])
            budget.build(_joined_size(owner, items), "`join()`")
            return (items, *args[1:])
    elif isinstance(owner, list | dict | set):
        if name in {"extend", "update"} and args:
            items = _sized(args[0])
            budget.build(len(items), f"`{name}()`")
            return (items, *args[1:])
        if name in _GROWING_METHODS:
            budget.build(1, f"`{name}()`")
    return args


def _sized(items: Any) -> Any:
    """Items whose number is known: an iterator is taken into a list, counted as it goes."""
    if isinstance(items, Sized) or not isinstance(items, Iterable):
        return items
    return list(_Counted(items))


def _arg(args: tuple[Any, ...], index: int) -> Any:
    return args[index] if len(args) > index else None


def _replaced_size(text: Any, old: Any, new: Any, count: Any) -> int:
    text, old, new = str(text), str(old), str(new)
    found = text.count(old) if old else len(text) + 1
    if isinstance(count, int) and count >= 0:
        found = min(found, count)
    return len(text) + found * (len(new) - len(old))


def _joined_size(separator: Any, items: Any) -> int:
    count = len(items) if isinstance(items, Sized) else 1
    return len(str(separator)) * max(count - 1, 0)


# --- budgeted filters and globals ---------------------------------------------------------


def _center(value: Any, width: int = 80) -> str:
    if isinstance(width, int):
        current().build(width, "`center`")
    return jinja_filters.do_center(value, width)


def _indent(text: Any, width: int | str = 4, first: bool = False, blank: bool = False) -> str:
    lines = str(text).count("\n") + 1
    pad = width if isinstance(width, int) else len(str(width))
    current().build(pad * lines, "`indent`")
    return jinja_filters.do_indent(text, width, first, blank)


def _format(value: Any, *args: Any, **kwargs: Any) -> str:
    _check_printf(str(value), args or tuple(kwargs.values()))
    return jinja_filters.do_format(value, *args, **kwargs)


@pass_eval_context
def _replace(eval_ctx: Any, text: Any, old: Any, new: Any, count: int | None = None) -> str:
    current().build(_replaced_size(text, old, new, count), "`replace`")
    return jinja_filters.do_replace(eval_ctx, text, old, new, count)


@pass_eval_context
def _join(eval_ctx: Any, value: Any, d: str = "", attribute: Any = None) -> str:
    items = list(_Counted(value)) if not isinstance(value, Sized) else value
    current().build(_joined_size(d, items), "`join`")
    return jinja_filters.do_join(eval_ctx, items, d, attribute)


def _batch(value: Any, linecount: int, fill_with: Any = None) -> Iterator[list[Any]]:
    if fill_with is not None and isinstance(linecount, int):
        current().build(linecount, "`batch` padding")
    return jinja_filters.do_batch(value, linecount, fill_with)


def _slice(value: Any, slices: int, fill_with: Any = None) -> Iterator[list[Any]]:
    if isinstance(slices, int):
        current().iterate(slices, "`slice`")
    return jinja_filters.do_slice(value, slices, fill_with)


def _range(*args: int) -> range:
    numbers = range(*args)  # Jinja's sandbox allows at most 100,000 items per range
    if len(numbers) > 100_000:
        raise RenderBudgetError(f"range() of {len(numbers):,} items; at most 100,000")
    current().iterate(len(numbers), "`range()`")
    return numbers


def _lipsum(n: int = 5, html: bool = True, min: int = 20, max: int = 100) -> str:
    current().build(n * max * 12, "`lipsum()`")  # a word is at most about 12 characters
    return str(generate_lorem_ipsum(n, html, min, max))
