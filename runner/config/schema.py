"""The pipeline JSON Schema and its validator, read and built once per process.

Validating a thousand files must take seconds, so nothing here is rebuilt per file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from functools import cache
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from runner.config.keys import pipeline_schema


@cache
def validation_schema() -> dict[str, Any]:
    """The schema with every local `$ref` written out: validates twice as fast, because
    jsonschema no longer looks references up at each use. (`$defs` stay, written out too, for
    `definition_validator`.)"""
    root = pipeline_schema()
    return _inline(root, root)


def _inline(node: Any, root: Mapping[str, Any]) -> Any:
    if isinstance(node, Mapping):
        if "$ref" in node:
            target = _inline(_follow(root, str(node["$ref"])), root)
            return {**target, **{k: _inline(v, root) for k, v in node.items() if k != "$ref"}}
        return {key: _inline(value, root) for key, value in node.items()}
    if isinstance(node, list):
        return [_inline(item, root) for item in node]
    return node


def _follow(root: Mapping[str, Any], reference: str) -> Any:
    target: Any = root
    for part in reference.removeprefix("#/").split("/"):
        target = target[part]
    return target


@cache
def pipeline_validator() -> Draft202012Validator:
    return Draft202012Validator(validation_schema())


@cache
def definition_validator(name: str) -> Draft202012Validator:
    """A validator for one of the schema's `$defs` (e.g. `script_file`), built once."""
    return Draft202012Validator({**validation_schema()["$defs"][name], "$defs": {}})


@cache
def metaschema_validator() -> Draft202012Validator:
    """Checks that an extraction schema written in a pipeline is itself a valid JSON Schema."""
    return Draft202012Validator(Draft202012Validator.META_SCHEMA)


@cache
def fast_check() -> Callable[[Any], bool] | None:
    """The schema compiled into a yes/no predicate (runner.config.fastcheck), or None when it
    uses a keyword the fast path does not know."""
    from runner.config.fastcheck import Unsupported, compile_schema

    try:
        return compile_schema(validation_schema())
    except Unsupported:
        return None


def schema_errors(data: Any) -> Iterator[ValidationError]:
    """Every schema error of a document. A valid document (most are) is recognised by the fast
    predicate, many times faster than jsonschema; the others get jsonschema's errors."""
    check = fast_check()
    if check is not None and check(data):
        return iter(())
    return pipeline_validator().iter_errors(data)
