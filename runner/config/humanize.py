"""jsonschema's errors, rewritten for the person who wrote the pipeline.

jsonschema reports what failed in the schema's terms ("'x' is not valid under any of the given
schemas"). An author needs the key path, what was expected in YAML terms, a "did you mean" for a
near miss, and — for a failed `oneOf` — the errors of the alternative they most likely meant
rather than of every alternative. Every diagnostic made here has an `S1xx` code (docs/validate.md).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from datetime import date
from typing import Any

from jsonschema.exceptions import ValidationError

from runner.config.schema import validation_schema
from runner.config.suggest import did_you_mean, suggestion_suffix
from runner.documents.diagnostics import Diagnostic, KeyPath, format_key_path, value_at
from runner.documents.loader import YamlFile, shorten

TYPE_NAMES = {
    "object": "a mapping",
    "array": "a list",
    "string": "a text",
    "integer": "a whole number",
    "number": "a number",
    "boolean": "true or false",
    "null": "nothing",
}


def humanize(
    errors: Iterable[ValidationError],
    document: YamlFile,
    root: Mapping[str, Any] | None = None,
) -> list[Diagnostic]:
    """Diagnostics for every schema error of a document, without duplicates. `root` is the
    schema the errors came from (default: the pipeline schema, as validated)."""
    explainer = _Explainer(document, root if root is not None else validation_schema())
    diagnostics: dict[tuple[str, KeyPath, str], Diagnostic] = {}
    for error in errors:
        for diagnostic in explainer.explain(error):
            diagnostics.setdefault(
                (diagnostic.code, diagnostic.path, diagnostic.message), diagnostic
            )
    return _one_error_per_misspelt_key(list(diagnostics.values()), explainer.misspelt)


def _one_error_per_misspelt_key(
    diagnostics: list[Diagnostic], misspelt: set[tuple[KeyPath, str]]
) -> list[Diagnostic]:
    """A misspelt required key is one mistake: keep "unknown key `kye`; did you mean `key`?"
    and drop the "missing required key `key`" it also causes in the same mapping."""
    return [
        diagnostic
        for diagnostic in diagnostics
        if not (
            diagnostic.code == "S102" and (diagnostic.path, _missing_key(diagnostic)) in misspelt
        )
    ]


def _missing_key(diagnostic: Diagnostic) -> str:
    return diagnostic.message.split("`")[1] if diagnostic.message.count("`") >= 2 else ""


class _Explainer:
    def __init__(self, document: YamlFile, root: Mapping[str, Any]) -> None:
        self.document = document
        self.root = root
        # (mapping path, the key a misspelt key was probably meant to be)
        self.misspelt: set[tuple[KeyPath, str]] = set()
        self.handlers: dict[str, Callable[[ValidationError], Iterator[Diagnostic]]] = {
            "oneOf": self._alternatives,
            "anyOf": self._alternatives,
            "additionalProperties": self._unknown_keys,
            "required": self._required,
            "type": self._type,
            "enum": self._enum,
            "const": self._enum,
            "pattern": self._pattern,
            "minimum": self._range,
            "maximum": self._range,
            "exclusiveMinimum": self._range,
            "minLength": self._empty,
            "minItems": self._empty,
            "minProperties": self._empty,
            "maxProperties": self._too_many_keys,
            "uniqueItems": self._duplicate_item,
            "dependentRequired": self._dependent,
            "not": self._not,
        }

    def explain(self, error: ValidationError) -> Iterator[Diagnostic]:
        if "propertyNames" in error.relative_schema_path:
            yield from self._bad_key_name(error)
            return
        handler = self.handlers.get(str(error.validator))
        if handler is None:
            yield self._diagnostic("S199", shorten(error.message, 200), _path(error))
            return
        yield from handler(error)

    # --- building blocks -----------------------------------------------------------------

    def _diagnostic(
        self, code: str, message: str, path: KeyPath, *, hint: str = "", at_key: bool = False
    ) -> Diagnostic:
        diagnostic = self.document.diagnostic(code, message, path, hint=hint, at_key=at_key)
        if not path and not at_key:  # the whole document: its first line, not its first key
            return replace(diagnostic, line=1, col=1)
        return diagnostic

    def _subject(self, path: KeyPath) -> str:
        """How a message names a place: `tools[2] (product_lookup)` or `llm.cache`."""
        if not path:
            return "the top level"
        text = format_key_path(path)
        if len(path) == 2 and path[0] == "tools":
            name = value_at(self.document.data, (*path, "name"))
            if isinstance(name, str):
                text += f" (`{name}`)"
        return text

    def _source_text(self, path: KeyPath) -> str:
        """The value as written in the file (for `quote it` hints)."""
        position = self.document.position(path)
        lines = self.document.lines
        if not 0 < position.line <= len(lines):
            return ""
        text = lines[position.line - 1][position.col - 1 :].split(" #")[0]
        # a scalar in a flow list or mapping ends at the next separator
        return re.split(r"[,\]}]", text)[0].strip()

    # --- handlers, one per schema keyword -----------------------------------------------

    def _alternatives(self, error: ValidationError) -> Iterator[Diagnostic]:
        branches = list(_argument(error))
        if all(set(branch) <= {"required"} for branch in branches):
            keys = [branch["required"][0] for branch in branches]
            wanted = " or ".join(f"`{key}`" for key in keys)
            yield self._diagnostic(
                "S109",
                f"{self._subject(_path(error))} needs {wanted}",
                _path(error),
                hint=_property_hint(_schema(error), keys),
            )
            return
        chosen = _likely_branch(error)
        if chosen is None:
            expected = " or ".join(_expected_types(branches))
            found = describe(_instance(error))
            yield self._diagnostic(
                "S103",
                f"{self._subject(_path(error))} must be {expected}, not {found}",
                _path(error),
                hint=_description(_schema(error)),
            )
            return
        for sub_error in chosen:
            yield from self.explain(sub_error)

    def _unknown_keys(self, error: ValidationError) -> Iterator[Diagnostic]:
        if not isinstance(_instance(error), Mapping):
            return
        allowed = set(_schema(error).get("properties", {}))
        path = _path(error)
        for key in _instance(error):
            if key not in allowed:
                self._note_misspelt(path, key, allowed)
                yield self._diagnostic(
                    "S101",
                    f"unknown key `{shorten(key)}` in {self._subject(path)}"
                    + suggestion_suffix(key, allowed),
                    (*path, key),
                    hint=f"allowed here: {', '.join(sorted(allowed))}",
                    at_key=True,
                )

    def _unknown_key_for_kind(self, error: ValidationError) -> Iterator[Diagnostic]:
        """A key outside a kind branch's `propertyNames` (a tool key of another kind, a typo)."""
        schema_path = list(error.schema_path)
        branch_at = len(schema_path) - 1 - schema_path[::-1].index("then")
        branch = _schema_at(self.root, schema_path[:branch_at])
        branches = _schema_at(self.root, schema_path[: branch_at - 1])
        kind = _branch_value(branch["if"])
        allowed = set(_argument(error))
        own = sorted(set(branch["then"].get("properties", {})))
        key, path = str(_instance(error)), _path(error)
        hint = f"a `{kind}` tool takes {', '.join(own)} besides the keys every tool takes"
        owners = [
            _branch_value(other["if"])
            for other in branches
            if key in other.get("then", {}).get("properties", {})
        ]
        if owners:
            hint = f"`{key}` belongs to {' and '.join(map(str, owners))} tools; {hint}"
        self._note_misspelt(path, key, allowed)
        yield self._diagnostic(
            "S101",
            f"unknown key `{shorten(key)}` for a `{kind}` tool" + suggestion_suffix(key, allowed),
            (*path, key),
            hint=hint,
            at_key=True,
        )

    def _note_misspelt(self, path: KeyPath, key: str, allowed: Iterable[str]) -> None:
        meant = did_you_mean(key, allowed)
        if meant is not None:
            self.misspelt.add((path, meant))

    def _required(self, error: ValidationError) -> Iterator[Diagnostic]:
        instance = _instance(error) if isinstance(_instance(error), Mapping) else {}
        path = _path(error)
        for key in _argument(error):
            if key in instance:
                continue
            hint = _property_hint(_schema(error), [key])
            guess = _guess_discriminator(error, key, instance)
            if guess:
                hint = f"the keys given look like `{key}: {guess}`"
            yield self._diagnostic(
                "S102", f"missing required key `{key}` in {self._subject(path)}", path, hint=hint
            )

    def _type(self, error: ValidationError) -> Iterator[Diagnostic]:
        expected = _argument(error)
        names = [expected] if isinstance(expected, str) else list(expected)
        wanted = " or ".join(TYPE_NAMES.get(name, name) for name in names)
        path = _path(error)
        hint = _description(_schema(error))
        if "string" in names and _is_scalar(_instance(error)):
            written = self._source_text(path) or str(_instance(error))
            hint = f'quote it to make it a text: "{shorten(written)}"'
        yield self._diagnostic(
            "S103",
            f"{self._subject(path)} must be {wanted}, not {describe(_instance(error))}",
            path,
            hint=hint,
        )

    def _enum(self, error: ValidationError) -> Iterator[Diagnostic]:
        allowed = [_argument(error)] if error.validator == "const" else list(_argument(error))
        shown = ", ".join(str(value) for value in allowed)
        value = _instance(error)
        message = f"{self._subject(_path(error))}: `{shorten(value)}` is not allowed; expected "
        message += f"one of: {shown}" if len(allowed) > 1 else f"`{shown}`"
        if isinstance(value, str):
            message += suggestion_suffix(value, [str(choice) for choice in allowed])
        yield self._diagnostic("S104", message, _path(error), hint=_description(_schema(error)))

    def _pattern(self, error: ValidationError) -> Iterator[Diagnostic]:
        rule = _schema(error).get("patternErrorMessage") or f"it must match `{_argument(error)}`"
        yield self._diagnostic(
            "S105",
            f"{self._subject(_path(error))}: `{shorten(_instance(error))}` is not valid: {rule}",
            _path(error),
        )

    def _range(self, error: ValidationError) -> Iterator[Diagnostic]:
        bound = _argument(error)
        phrase = {
            "minimum": f"at least {bound}",
            "maximum": f"at most {bound}",
            "exclusiveMinimum": f"more than {bound}",
        }[str(error.validator)]
        yield self._diagnostic(
            "S106",
            f"{self._subject(_path(error))} must be {phrase}, not {_instance(error)}",
            _path(error),
            hint=_description(_schema(error)),
        )

    def _empty(self, error: ValidationError) -> Iterator[Diagnostic]:
        bound = _argument(error)
        what = {"minLength": "character", "minItems": "item", "minProperties": "entry"}[
            str(error.validator)
        ]
        need = "must not be empty" if bound == 1 else f"needs at least {bound} {what}s"
        yield self._diagnostic(
            "S107",
            f"{self._subject(_path(error))} {need}",
            _path(error),
            hint=_description(_schema(error)),
        )

    def _too_many_keys(self, error: ValidationError) -> Iterator[Diagnostic]:
        keys = ", ".join(f"`{shorten(key)}`" for key in _instance(error))
        yield self._diagnostic(
            "S108",
            f"{self._subject(_path(error))} takes only {_argument(error)} of its keys, got {keys}",
            _path(error),
            hint=_description(_schema(error)),
        )

    def _duplicate_item(self, error: ValidationError) -> Iterator[Diagnostic]:
        seen: list[Any] = []
        for index, item in enumerate(_instance(error)):
            if item in seen:
                yield self._diagnostic(
                    "S112",
                    f"{self._subject(_path(error))} lists `{shorten(item)}` twice",
                    (*_path(error), index),
                    hint="remove the repeated item",
                )
                return
            seen.append(item)

    def _dependent(self, error: ValidationError) -> Iterator[Diagnostic]:
        path = _path(error)
        for key, needed in _argument(error).items():
            if key not in _instance(error):
                continue
            for other in needed:
                if other not in _instance(error):
                    yield self._diagnostic(
                        "S113",
                        f"`{key}` in {self._subject(path)} needs `{other}`",
                        (*path, key),
                        hint=_property_hint(_schema(error), [other]),
                        at_key=True,
                    )

    def _not(self, error: ValidationError) -> Iterator[Diagnostic]:
        forbidden = _argument(error)
        path = _path(error)
        if isinstance(forbidden, Mapping) and "required" in forbidden:
            keys = list(forbidden["required"])
            pair = " and ".join(f"`{key}`" for key in keys)
            yield self._diagnostic(
                "S110",
                f"{self._subject(path)} gives both {pair}; keep one",
                (*path, keys[-1]),
                hint=_description(forbidden),  # what each of the two holds
                at_key=True,
            )
            return
        yield self._diagnostic(
            "S111",
            f"`{path[-1]}` is not allowed in {self._subject(path[:-1])}",
            path,
            hint=_description(_schema(error)),
            at_key=True,
        )

    def _bad_key_name(self, error: ValidationError) -> Iterator[Diagnostic]:
        if "then" in error.relative_schema_path and error.validator == "enum":
            yield from self._unknown_key_for_kind(error)
            return
        path, key = _path(error), str(_instance(error))
        rule = _schema(error).get("patternErrorMessage")
        if rule is None and "enum" in _schema(error):
            rule = "expected one of: " + ", ".join(_schema(error)["enum"])
            rule += suggestion_suffix(key, _schema(error)["enum"])
        yield self._diagnostic(
            "S105",
            f"{self._subject(path)}: the key `{shorten(key)}` is not valid: "
            f"{rule or shorten(error.message, 200)}",
            (*path, key),
            at_key=True,
        )


# --- helpers ------------------------------------------------------------------------------


def _path(error: ValidationError) -> KeyPath:
    return tuple(error.absolute_path)


def _argument(error: ValidationError) -> Any:
    """The failed keyword's value in the schema (typed as maybe unset: every error jsonschema
    reports has it)."""
    argument: Any = error.validator_value
    return argument


def _instance(error: ValidationError) -> Any:
    """The value that failed (typed as maybe unset: every error jsonschema reports has it)."""
    instance: Any = error.instance
    return instance


def _schema(error: ValidationError) -> Mapping[str, Any]:
    """The schema the failed keyword belongs to (a boolean schema has no keywords)."""
    return error.schema if isinstance(error.schema, Mapping) else {}


def _is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, bool | int | float | date)


def describe(value: Any) -> str:
    """A value's YAML type in words, with the value itself when it is short."""
    if value is None:
        return "an empty value"
    if isinstance(value, bool):
        return f"`{str(value).lower()}` (true or false)"
    if isinstance(value, date):
        return f"a date ({value})"
    if isinstance(value, int | float):
        return f"the number {value}"
    if isinstance(value, str):
        return f'the text "{value}"' if len(value) <= 40 else "a text"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, Mapping):
        return "a mapping"
    return type(value).__name__


def _description(schema: Any) -> str:
    return str(schema.get("description", "")) if isinstance(schema, Mapping) else ""


def _property_hint(schema: Mapping[str, Any], keys: Sequence[str]) -> str:
    """`key`: what it is, from the schema's descriptions of the keys an error is about."""
    properties = _all_properties(schema)
    parts = [f"`{key}`: {_description(properties[key])}" for key in keys if key in properties]
    return " ".join(part for part in parts if not part.endswith(": "))


def _all_properties(schema: Mapping[str, Any]) -> dict[str, Any]:
    """An object's properties, with those of its `if`/`then` branches."""
    properties = dict(schema.get("properties", {}))
    for branch in schema.get("allOf", []):
        if "then" in branch:
            properties.update(_all_properties(branch["then"]))
    return properties


def _schema_at(root: Mapping[str, Any], path: Sequence[str | int]) -> Any:
    node: Any = root
    for part in path:
        node = node[part]
    return node


def _branch_value(condition: Mapping[str, Any]) -> str | None:
    for spec in condition.get("properties", {}).values():
        if "const" in spec:
            return str(spec["const"])
    return None


def _likely_branch(error: ValidationError) -> list[ValidationError] | None:
    """The errors of the `oneOf`/`anyOf` alternative the author most likely meant: not one
    whose type is wrong, then the one with the fewest errors. None when every type is wrong."""
    by_branch: dict[int, list[ValidationError]] = {}
    for sub_error in error.context or ():
        by_branch.setdefault(int(sub_error.relative_schema_path[0]), []).append(sub_error)
    candidates = [
        errors
        for errors in by_branch.values()
        if not any(e.validator == "type" and not e.relative_path for e in errors)
    ]
    if not candidates:
        return None
    return min(candidates, key=lambda errors: (len(errors), -max(len(e.path) for e in errors)))


def _expected_types(branches: Sequence[Mapping[str, Any]]) -> list[str]:
    names: list[str] = []
    for branch in branches:
        declared = branch.get("type", [])
        for name in [declared] if isinstance(declared, str) else declared:
            if TYPE_NAMES.get(name, name) not in names:
                names.append(TYPE_NAMES.get(name, name))
    return names


def _guess_discriminator(
    error: ValidationError, key: str, instance: Mapping[str, Any]
) -> str | None:
    """For a missing discriminator (`kind`): the branch whose keys the object uses most."""
    best: tuple[int, str] | None = None
    for branch in _schema(error).get("allOf", []):
        condition = branch.get("if", {})
        if key not in condition.get("required", ()) or "then" not in branch:
            continue
        value = _branch_value(condition)
        overlap = len(set(branch["then"].get("properties", {})) & set(instance))
        if value and overlap and (best is None or overlap > best[0]):
            best = (overlap, value)
    return best[1] if best else None
