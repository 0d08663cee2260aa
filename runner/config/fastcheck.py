"""A fast yes/no answer to "does this document meet the pipeline schema?".

jsonschema reports every error with its place, which is what an author needs, but it pays for
that on every document: each subschema it enters builds a new validator object, so a valid
pipeline of a hundred lines takes milliseconds. Most files CI validates are valid. This module
compiles the schema (its `$ref`s already written out by `runner.config.schema`) once into plain
Python predicates with jsonschema's exact semantics (the same type checks; a value that is no
text is compared by a jsonschema validator of that one keyword, through its public API); a
document they accept has no schema error, and only a document they reject goes
through jsonschema for its errors.

A keyword this compiler does not know makes `compile_schema` raise `Unsupported`: the caller then
always uses jsonschema, so the fast path can never accept what jsonschema would reject.
"""

from __future__ import annotations

import numbers
import re
from collections.abc import Callable, Mapping
from typing import Any

from jsonschema import Draft202012Validator

Check = Callable[[Any], bool]

# Keywords that say nothing about validity (draft 2020-12 annotations, and our own
# `patternErrorMessage`, which only words a message). `format` is an annotation too: the
# pipeline validator is built without a format checker.
_ANNOTATIONS = frozenset(
    {
        "$schema",
        "$id",
        "$defs",
        "$comment",
        "title",
        "description",
        "default",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
        "format",
        "markdownDescription",
        "defaultDescription",
        "patternErrorMessage",
    }
)


class Unsupported(ValueError):
    """The schema uses a keyword the fast path does not implement."""


def _is_integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Number) and not isinstance(value, bool)


# jsonschema's draft 2020-12 type checker, type by type
_TYPES: dict[str, Check] = {
    "array": lambda value: isinstance(value, list),
    "boolean": lambda value: isinstance(value, bool),
    "integer": _is_integer,
    "null": lambda value: value is None,
    "number": _is_number,
    "object": lambda value: isinstance(value, dict),
    "string": lambda value: isinstance(value, str),
}


def compile_schema(schema: Any) -> Check:
    """A predicate that is true exactly when jsonschema finds no error."""
    if schema is True:
        return lambda value: True
    if schema is False:
        return lambda value: False
    if not isinstance(schema, Mapping):
        raise Unsupported(f"a schema must be a mapping or a boolean, not {schema!r}")
    checks: list[Check] = []
    for keyword, argument in schema.items():
        if keyword in _ANNOTATIONS or keyword in _COMPANIONS:
            continue
        make = _KEYWORDS.get(keyword)
        if make is None:
            raise Unsupported(f"keyword {keyword!r}")
        checks.append(make(argument, schema))
    return _all(checks)


def _all(checks: list[Check]) -> Check:
    """True when every check is."""
    if len(checks) == 1:
        return checks[0]
    return lambda value: all(check(value) for check in checks)


# --- keywords ---------------------------------------------------------------------------------


def _type(types: Any, schema: Mapping[str, Any]) -> Check:
    names = [types] if isinstance(types, str) else list(types)
    if any(name not in _TYPES for name in names):
        raise Unsupported(f"type {types!r}")
    checks = [_TYPES[name] for name in names]
    if len(checks) == 1:
        return checks[0]
    return lambda value: any(check(value) for check in checks)


def _by_jsonschema(keyword: str, argument: Any) -> Check:
    """jsonschema's own answer for one keyword: its equality of JSON values (1 is not true,
    1.0 is 1) is then the same by construction."""
    return Draft202012Validator({keyword: argument}).is_valid


def _enum(values: list[Any], schema: Mapping[str, Any]) -> Check:
    if all(isinstance(each, str) for each in values):
        # a text equals only the same text in jsonschema: a set lookup says the same
        texts = frozenset(values)
        return lambda value: isinstance(value, str) and value in texts
    return _by_jsonschema("enum", values)


def _const(constant: Any, schema: Mapping[str, Any]) -> Check:
    if isinstance(constant, str):
        return lambda value: isinstance(value, str) and value == constant
    return _by_jsonschema("const", constant)


def _properties(properties: Mapping[str, Any], schema: Mapping[str, Any]) -> Check:
    checks = {name: compile_schema(sub) for name, sub in properties.items()}

    def check(value: Any) -> bool:
        if not isinstance(value, dict):
            return True
        return all(sub(value[name]) for name, sub in checks.items() if name in value)

    return check


def _pattern_properties(patterns: Mapping[str, Any], schema: Mapping[str, Any]) -> Check:
    checks = [(re.compile(pattern), compile_schema(sub)) for pattern, sub in patterns.items()]

    def check(value: Any) -> bool:
        if not isinstance(value, dict):
            return True
        return all(
            sub(item) for regex, sub in checks for key, item in value.items() if regex.search(key)
        )

    return check


def _additional_properties(extra: Any, schema: Mapping[str, Any]) -> Check:
    known = set(schema.get("properties", {}))
    patterns = [re.compile(pattern) for pattern in schema.get("patternProperties", {})]
    sub = compile_schema(extra)

    def check(value: Any) -> bool:
        if not isinstance(value, dict):
            return True
        return all(
            sub(item)
            for key, item in value.items()
            if key not in known and not any(regex.search(key) for regex in patterns)
        )

    return check


def _property_names(names: Any, schema: Mapping[str, Any]) -> Check:
    sub = compile_schema(names)
    return lambda value: not isinstance(value, dict) or all(sub(key) for key in value)


def _required(names: list[str], schema: Mapping[str, Any]) -> Check:
    return lambda value: not isinstance(value, dict) or all(name in value for name in names)


def _dependent_required(rules: Mapping[str, list[str]], schema: Mapping[str, Any]) -> Check:
    def check(value: Any) -> bool:
        if not isinstance(value, dict):
            return True
        return all(
            all(each in value for each in needed) for name, needed in rules.items() if name in value
        )

    return check


def _items(items: Any, schema: Mapping[str, Any]) -> Check:
    if "prefixItems" in schema:
        raise Unsupported("prefixItems")
    sub = compile_schema(items)
    return lambda value: not isinstance(value, list) or all(sub(item) for item in value)


def _sized(kind: str, limit: int, at_least: bool) -> Check:
    matches = _TYPES[kind]
    if at_least:
        return lambda value: not matches(value) or len(value) >= limit
    return lambda value: not matches(value) or len(value) <= limit


def _bound(test: Callable[[Any], bool]) -> Check:
    return lambda value: not _is_number(value) or test(value)


def _unique(flag: bool, schema: Mapping[str, Any]) -> Check:
    if not flag:
        return lambda value: True
    unique = _by_jsonschema("uniqueItems", True)

    def check(value: Any) -> bool:
        if not isinstance(value, list):
            return True
        if all(isinstance(item, str) for item in value):  # texts: equal only when the same
            return len(set(value)) == len(value)
        return unique(value)

    return check


def _pattern(pattern: str, schema: Mapping[str, Any]) -> Check:
    regex = re.compile(pattern)
    return lambda value: not isinstance(value, str) or regex.search(value) is not None


def _all_of(schemas: list[Any], schema: Mapping[str, Any]) -> Check:
    switch = _kind_switch(schemas)
    if switch is not None:
        return switch
    return _all([compile_schema(sub) for sub in schemas])


def _kind_switch(schemas: list[Any]) -> Check | None:
    """`allOf` of `{if: {properties: {P: {const: "a"}}, required: [P]}, then: S}` branches (the
    tool kinds): only the branch whose constant is the value of P applies to an object, so look
    it up instead of testing every `if`. An instance that is no object passes every `if` (they
    only test objects), so it must meet every `then`."""
    key: str | None = None
    cases: dict[str, list[Check]] = {}
    for branch in schemas:
        condition = branch.get("if") if isinstance(branch, Mapping) else None
        if not isinstance(condition, Mapping) or set(branch) != {"if", "then"}:
            return None
        properties = condition.get("properties")
        if set(condition) != {"properties", "required"} or not isinstance(properties, Mapping):
            return None
        if len(properties) != 1 or list(condition["required"]) != list(properties):
            return None
        ((name, test),) = properties.items()
        if key not in (None, name) or set(test) != {"const"} or not isinstance(test["const"], str):
            return None
        key = name
        cases.setdefault(test["const"], []).append(compile_schema(branch["then"]))
    if key is None:
        return None
    every = [check for checks in cases.values() for check in checks]

    def check(value: Any) -> bool:
        if not isinstance(value, dict):
            return all(then(value) for then in every)
        chosen = value.get(key)
        # a constant that is text equals only that same text (jsonschema's `equal`)
        found = cases.get(chosen, ()) if isinstance(chosen, str) else ()
        return all(then(value) for then in found)

    return check


def _any_of(schemas: list[Any], schema: Mapping[str, Any]) -> Check:
    checks = [compile_schema(sub) for sub in schemas]
    return lambda value: any(check(value) for check in checks)


def _one_of(schemas: list[Any], schema: Mapping[str, Any]) -> Check:
    checks = [compile_schema(sub) for sub in schemas]
    return lambda value: sum(1 for check in checks if check(value)) == 1


def _not(sub: Any, schema: Mapping[str, Any]) -> Check:
    check = compile_schema(sub)
    return lambda value: not check(value)


def _if(condition: Any, schema: Mapping[str, Any]) -> Check:
    test = compile_schema(condition)
    then = compile_schema(schema.get("then", True))
    otherwise = compile_schema(schema.get("else", True))
    return lambda value: then(value) if test(value) else otherwise(value)


_KEYWORDS: dict[str, Callable[[Any, Mapping[str, Any]], Check]] = {
    "type": _type,
    "enum": _enum,
    "const": _const,
    "properties": _properties,
    "patternProperties": _pattern_properties,
    "additionalProperties": _additional_properties,
    "propertyNames": _property_names,
    "required": _required,
    "dependentRequired": _dependent_required,
    "items": _items,
    "minItems": lambda limit, schema: _sized("array", limit, True),
    "maxItems": lambda limit, schema: _sized("array", limit, False),
    "minLength": lambda limit, schema: _sized("string", limit, True),
    "maxLength": lambda limit, schema: _sized("string", limit, False),
    "minProperties": lambda limit, schema: _sized("object", limit, True),
    "maxProperties": lambda limit, schema: _sized("object", limit, False),
    "minimum": lambda limit, schema: _bound(lambda value: value >= limit),
    "maximum": lambda limit, schema: _bound(lambda value: value <= limit),
    "exclusiveMinimum": lambda limit, schema: _bound(lambda value: value > limit),
    "exclusiveMaximum": lambda limit, schema: _bound(lambda value: value < limit),
    "uniqueItems": _unique,
    "pattern": _pattern,
    "allOf": _all_of,
    "anyOf": _any_of,
    "oneOf": _one_of,
    "not": _not,
    "if": _if,
}
# read by the keyword they belong to (`if`, `additionalProperties`), not checked on their own
_COMPANIONS = frozenset({"then", "else"})
