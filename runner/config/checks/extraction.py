"""Extraction schemas: a valid JSON Schema describing a mapping of parameters (R113),
`clarify.required` naming parameters the schema declares (R119), and `user_given` marks on a
decomposition's fields only (R135)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from jsonschema.exceptions import ValidationError, best_match

from runner.config.checks.context import Checks
from runner.config.checks.templates import Allowed, template_pair
from runner.config.humanize import TYPE_NAMES, describe, suggestion_suffix
from runner.config.schema import metaschema_validator
from runner.documents.diagnostics import KeyPath, value_at


def extraction(checks: Checks, path: KeyPath, allowed: Allowed, *, plan: bool = False) -> None:
    """`plan`: a coordinator's decomposition, whose fields may be marked `user_given`."""
    template_pair(checks, path, allowed)
    user_given_marks(checks, (*path, "schema"), plan=plan)
    where = (*path, "schema")
    schema = value_at(checks.data, where)
    error = _metaschema_error(json.dumps(schema, sort_keys=True, default=str))
    if error is not None:
        checks.emit(
            "R113",
            f"the extraction schema is not a valid JSON Schema: {_metaschema_problem(error)}",
            (*where, *error.absolute_path),
            hint="see https://json-schema.org/understanding-json-schema/",
        )
        checks.mark_broken(where)
    elif schema.get("type") != "object":
        checks.emit(
            "R113",
            "the extraction schema must describe a mapping of parameters (`type: object`)",
            where,
            hint="e.g. {type: object, properties: {product: {type: string}}}",
        )
        checks.mark_broken(where)


def user_given_marks(checks: Checks, where: KeyPath, *, plan: bool) -> None:
    """R135: `user_given` is true or false, and marks a field of a decomposition (a tool's
    parameters are all checked against the conversation already)."""
    for mark in _marks(value_at(checks.data, where), where):
        value = value_at(checks.data, mark)
        if not isinstance(value, bool):
            checks.emit(
                "R135",
                f"`user_given` must be true or false, not {describe(value)}",
                mark,
                hint="`user_given: true` marks a field of the plan the user must give",
            )
        elif not plan:
            checks.emit(
                "R135",
                "`user_given` has no effect in a tool's parameters: every value extracted for "
                "a tool must come from the conversation already",
                mark,
                hint="it marks a field of a `decompose` schema; remove it here",
                warning=True,
                at_key=True,
            )


def _marks(schema: Any, where: KeyPath) -> list[KeyPath]:
    """The places of `user_given` keys in a schema's nodes (not a property of that name)."""
    found: list[KeyPath] = []
    stack: list[tuple[Any, KeyPath]] = [(schema, where)]
    while stack:
        node, path = stack.pop()
        if isinstance(node, Mapping):
            is_properties = bool(path) and path[-1] == "properties"
            for key, value in node.items():
                if key == "user_given" and not is_properties:
                    found.append((*path, key))
                else:
                    stack.append((value, (*path, key)))
        elif isinstance(node, list):
            stack.extend((item, (*path, index)) for index, item in enumerate(node))
    return sorted(found, key=str)


def parameter_schema(checks: Checks, block: KeyPath) -> Mapping[str, Any] | None:
    """The extraction schema of an `extract` / `parameters` block when R113 found it sound,
    else None. Every check that reads parameters reads them through this, never the raw value:
    a schema R113 reported may have any shape (a list of properties, a number for `required`)."""
    where = (*block, "schema")
    schema = value_at(checks.data, where)
    if checks.is_broken(where) or not isinstance(schema, Mapping):
        return None
    return schema


def declared_parameters(schema: Mapping[str, Any]) -> list[str]:
    """The parameter names a sound extraction schema declares (its `properties`)."""
    return list(schema.get("properties", {}))


def required_parameters(schema: Mapping[str, Any]) -> set[str]:
    """The parameter names a sound extraction schema requires: every reply has them."""
    return set(schema.get("required", ()))


def clarify_parameters(checks: Checks, path: KeyPath, tool: Mapping[str, Any]) -> None:
    if tool["kind"] != "prompt" or "parameters" not in tool:
        return
    schema = parameter_schema(checks, (*path, "parameters"))
    known = declared_parameters(schema) if schema is not None else []
    if not known:
        return
    for index, name in enumerate(tool["clarify"].get("required", ())):
        if name not in known:
            checks.emit(
                "R119",
                f"clarify.required names `{name}`, which the parameters schema does not "
                "declare" + suggestion_suffix(name, known),
                (*path, "clarify", "required", index),
                hint=f"declared parameters: {', '.join(sorted(known))}",
                warning=True,
            )


@lru_cache(maxsize=1024)
def _metaschema_error(schema_json: str) -> ValidationError | None:
    """The most relevant metaschema error of an extraction schema (cached by its JSON)."""
    return best_match(metaschema_validator().iter_errors(json.loads(schema_json)))


def _metaschema_problem(error: ValidationError) -> str:
    """A metaschema error in an author's words, e.g. `properties.products.type`: `list` is not
    a JSON Schema type; expected one of: array, boolean, …"""
    where = ".".join(str(part) for part in error.absolute_path) or "the schema"
    enums = [e for e in error.context or () if e.validator == "enum"]
    if enums:
        values: Any = enums[0].validator_value  # typed as maybe unset; an enum error has it
        allowed = [str(value) for value in values]
        return (
            f"`{where}`: `{error.instance}` is not allowed; expected one of: {', '.join(allowed)}"
            + suggestion_suffix(str(error.instance), allowed)
        )
    if error.validator == "type" and isinstance(error.validator_value, str):
        wanted = TYPE_NAMES.get(error.validator_value, error.validator_value)
        return f"`{where}` must be {wanted}, not {describe(error.instance)}"
    return f"`{where}`: {error.message}"
