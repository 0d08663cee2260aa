"""The pipeline schema's keys: each key's schema and default, read from
schemas/pipeline.schema.json, the one place a key is stated (docs/architecture.md, "Adding a
pipeline key").

Only `json` is imported here, not jsonschema: the model builder reads its defaults from here
also when a pipeline's validation is remembered (runner.config.validated) and nothing validates.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from types import MappingProxyType
from typing import Any

from runner.resources import schema_path


@cache
def pipeline_schema() -> dict[str, Any]:
    """The pipeline JSON Schema, as written (read once per process)."""
    schema: dict[str, Any] = json.loads(schema_path("pipeline").read_text(encoding="utf-8"))
    return schema


def definition(name: str) -> dict[str, Any]:
    """One of the schema's `$defs`, as written (its `$ref`s not followed)."""
    definitions: dict[str, dict[str, Any]] = pipeline_schema()["$defs"]
    return definitions[name]


def key_schema(name: str, *keys: str) -> Mapping[str, Any]:
    """The schema of a key, its `$ref`s followed: `key_schema("corpus", "pages", "max_words")`
    is `corpora.<name>.pages.max_words`. `name` is a `$defs` name, or `pipeline` for the top
    level. (Read from the schema as written, so that building a pipeline whose validation is
    remembered never writes the whole schema out.)"""
    node = resolved(pipeline_schema() if name == "pipeline" else definition(name))
    for key in keys:
        node = resolved(_object(node)["properties"][key])
    return node


def resolved(node: Mapping[str, Any]) -> Mapping[str, Any]:
    """A schema with what its `$ref` names beneath its own keywords (which win)."""
    if "$ref" not in node:
        return node
    target = definition(str(node["$ref"]).removeprefix("#/$defs/"))
    return {**resolved(target), **{k: v for k, v in node.items() if k != "$ref"}}


def _object(node: Mapping[str, Any]) -> Mapping[str, Any]:
    """A schema that is a mapping, or the mapping of its `oneOf` (a text or a mapping)."""
    if "properties" in node:
        return node
    branches = [branch for branch in node.get("oneOf", ()) if branch.get("type") == "object"]
    return resolved(branches[0]) if len(branches) == 1 else node


@cache
def default(name: str, *keys: str) -> Any:
    """A key's `default` as the schema states it (KeyError when it states none). Defaults are
    shared by every caller: read them, never change them."""
    return key_schema(name, *keys)["default"]


@cache
def defaults(name: str, *keys: str) -> Mapping[str, Any]:
    """Every key of a schema object that has a `default`, with it: what the model builder
    fills in for a key the file leaves out (the one place a default is written)."""
    properties = _object(key_schema(name, *keys)).get("properties", {})
    found = {key: resolved(spec).get("default", _NONE) for key, spec in properties.items()}
    return MappingProxyType({key: value for key, value in found.items() if value is not _NONE})


def filled(data: Mapping[str, Any], name: str, *keys: str) -> dict[str, Any]:
    """A mapping of the file with the defaults the schema states for the keys it leaves out
    (`name`, `keys`: where the mapping is in the schema, as for `default`)."""
    return {**defaults(name, *keys), **data}


_NONE = object()
