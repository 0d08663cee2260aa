"""A key's default is written once, in the schema: the model builder fills in what the schema
states (runner.config.keys), so a default changed there is the default that runs."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from runner.config import keys
from runner.config.build import build_pipeline
from runner.config.model import RetrieveOptions
from runner.documents.loader import read_document

RETRIEVE = """\
domain: shop
corpora:
  manual: {path: manual}
tools:
  - name: manual_rag
    kind: retrieve
    corpus: manual
"""


@pytest.fixture
def schema(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    """A copy of the pipeline schema that the builder reads while the test changes it."""
    changed = copy.deepcopy(keys.pipeline_schema())
    keys.defaults.cache_clear()
    keys.default.cache_clear()
    monkeypatch.setattr(keys, "pipeline_schema", lambda: changed)
    yield changed
    keys.defaults.cache_clear()
    keys.default.cache_clear()


def test_a_key_s_default_is_read_by_its_place_in_the_schema() -> None:
    assert keys.default("corpus", "pages", "max_words") == 250
    assert keys.default("tool", "output") == "context"  # a `$ref` with its own default


def test_a_key_without_a_default_has_none_to_read() -> None:
    with pytest.raises(KeyError):
        keys.default("retrieve_tool", "corpus")
    assert "corpus" not in keys.defaults("retrieve_tool")


def test_a_text_or_mapping_key_s_defaults_are_its_mapping_s() -> None:
    assert keys.defaults("prompt_type")["description"] == ""


def test_the_builder_fills_in_the_default_the_schema_states(
    schema: dict[str, Any], write_pipeline: Callable[..., Path]
) -> None:
    schema["$defs"]["retrieve_tool"]["properties"]["top_k"]["default"] = 7
    path = write_pipeline(RETRIEVE, {"manual/a.md": "# A\n\ntext\n"})
    [tool] = build_pipeline(read_document(path)).tools
    assert isinstance(tool.options, RetrieveOptions)
    assert tool.options.top_k == 7


def test_the_builder_fills_in_a_nested_key_s_default_the_schema_states(
    schema: dict[str, Any], write_pipeline: Callable[..., Path]
) -> None:
    pages = schema["$defs"]["corpus"]["properties"]["pages"]["properties"]
    pages["max_words"]["default"] = 99
    path = write_pipeline(RETRIEVE, {"manual/a.md": "# A\n\ntext\n"})
    assert build_pipeline(read_document(path)).corpora["manual"].max_words == 99


def test_the_builder_fills_in_a_common_tool_key_s_default_the_schema_states(
    schema: dict[str, Any], write_pipeline: Callable[..., Path]
) -> None:
    schema["$defs"]["tool"]["properties"]["priority"]["default"] = 42
    path = write_pipeline(RETRIEVE, {"manual/a.md": "# A\n\ntext\n"})
    [tool] = build_pipeline(read_document(path)).tools
    assert tool.priority == 42
