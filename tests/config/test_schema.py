"""The pipeline JSON Schema: valid 2020-12, closed everywhere, described everywhere, and in step
with the typed model."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import yaml
from click.testing import CliRunner
from jsonschema import Draft202012Validator

from runner.cli import main
from runner.config.model import ActivationMode, Output, ToolKind
from runner.config.schema import pipeline_schema, validation_schema
from runner.llm.types import Purpose
from runner.resources import schema_path

# Objects whose keys are free by design: their content is checked another way.
FREE_OBJECTS = {
    ("$defs", "extraction", "properties", "schema"),  # checked against the metaschema (R113)
    ("$defs", "python_tool", "properties", "settings"),  # handed to the python class
    # sent to the MCP server's tool; `runner validate --online` checks them against its schema
    ("$defs", "mcp_tool", "properties", "arguments"),
}
# A tool is closed by its kind's branch: `propertyNames` lists the keys that kind takes.
TOOL = ("$defs", "tool")
KIND_BRANCHES = {("$defs", f"{kind.value}_tool") for kind in ToolKind}


def walk(node: Any, path: tuple[str | int, ...] = ()) -> Iterator[tuple[tuple, Any]]:
    yield path, node
    if isinstance(node, dict):
        for key, value in node.items():
            yield from walk(value, (*path, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from walk(value, (*path, index))


def test_schema_is_a_valid_2020_12_schema() -> None:
    schema = pipeline_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(schema)


def test_every_property_has_a_description() -> None:
    # the validation schema has every `$ref` written out, so a property's own description
    # or the description of what it refers to counts
    for path, node in walk(validation_schema()):
        if path and path[-1] == "properties" and "if" not in path:
            for key, spec in node.items():
                assert spec.get("description"), f"{'/'.join(map(str, path))}/{key}"


def test_every_object_rejects_unknown_keys() -> None:
    for path, node in walk(pipeline_schema()):
        if not isinstance(node, dict) or node.get("type") != "object":
            continue
        if path in FREE_OBJECTS or path in KIND_BRANCHES or path == TOOL or "if" in path:
            continue
        closed = node.get("additionalProperties") is False
        closed |= node.get("unevaluatedProperties") is False
        # maps keyed by names (corpora, prompt types…) close their values instead
        closed |= isinstance(node.get("additionalProperties"), dict) and "propertyNames" in node
        assert closed, "/".join(map(str, path))


def test_each_kind_takes_the_common_keys_and_its_own_only() -> None:
    defs = pipeline_schema()["$defs"]
    common = set(defs["tool"]["properties"])
    for kind in ToolKind:
        branch = defs[f"{kind.value}_tool"]
        assert set(branch["propertyNames"]["enum"]) == common | set(branch["properties"]), kind


def test_tool_kinds_match_the_model() -> None:
    kinds = pipeline_schema()["$defs"]["tool"]["properties"]["kind"]["enum"]
    assert set(kinds) == {kind.value for kind in ToolKind}


def test_purposes_match_the_model() -> None:
    assert set(pipeline_schema()["$defs"]["purpose"]["enum"]) == {p.value for p in Purpose}


def test_activation_modes_match_the_model() -> None:
    modes = pipeline_schema()["$defs"]["activation"]["oneOf"][0]["enum"]
    assert set(modes) == {mode.value for mode in ActivationMode} - {"rule"}


def test_outputs_match_the_model() -> None:
    assert set(pipeline_schema()["$defs"]["output"]["enum"]) == {o.value for o in Output}


def test_runner_schema_prints_the_schema_file() -> None:
    result = CliRunner().invoke(main, ["schema"])
    assert result.exit_code == 0
    assert json.loads(result.output) == json.loads(schema_path("pipeline").read_text())


DEFAULT_IN_WORDS = re.compile(r"(?i)\bdefault `?(\w[\w.]*)`?(?=[),;.:])")


def test_a_default_a_description_names_is_the_key_s_default() -> None:
    """A description that says "(default 4)" for an editor's hover says what `default` says."""
    wrong = []
    for path, node in walk(pipeline_schema()):
        if not (path and path[-1] == "properties" and isinstance(node, dict)):
            continue
        for key, spec in node.items():
            words = f"{spec.get('description', '')} {spec.get('markdownDescription', '')}"
            for named in DEFAULT_IN_WORDS.findall(words):
                value = yaml.safe_load(named)
                scalar = not isinstance(spec.get("default"), list | dict)  # "[] is all" is words
                if "default" in spec and scalar and value != spec["default"]:
                    wrong.append((key, named, spec["default"]))
                elif "default" not in spec and not isinstance(value, str):
                    wrong.append((key, named, "no default"))
    assert wrong == []
