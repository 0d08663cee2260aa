"""The tool kind registry (runner.tools.KIND_MODULES): one module per kind the pipeline
schema's `kind` enum allows, each with the `build` the registry calls."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

from runner.config.model import ToolKind
from runner.tools import KIND_MODULES

SCHEMA = json.loads(
    (Path(__file__).resolve().parents[2] / "schemas" / "pipeline.schema.json").read_text("utf-8")
)


def test_every_kind_the_schema_allows_has_a_registry_entry_and_no_other() -> None:
    kinds = SCHEMA["$defs"]["tool"]["properties"]["kind"]["enum"]
    assert sorted(kind.value for kind in KIND_MODULES) == sorted(kinds)


def test_every_kind_of_the_typed_model_has_a_registry_entry() -> None:
    assert set(KIND_MODULES) == set(ToolKind)


@pytest.mark.parametrize("kind", list(KIND_MODULES), ids=lambda kind: kind.value)
def test_each_kinds_module_has_the_build_the_registry_calls(kind: ToolKind) -> None:
    assert callable(importlib.import_module(KIND_MODULES[kind]).build)
