"""The provider registry (runner.llm.providers.PROVIDERS): one entry per name the pipeline
schema's `llm.provider` enum allows, each building the provider it is named after; the
structured-output modes (runner.llm.decoding.MODES) are the schema's `structured` enum."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from runner.config.model import LLMConfig
from runner.llm import decoding
from runner.llm.errors import LLMConfigError
from runner.llm.providers import PROVIDERS, make_provider
from runner.llm.settings import parse_override

SCHEMA = json.loads(
    (Path(__file__).resolve().parents[2] / "schemas" / "pipeline.schema.json").read_text("utf-8")
)
LLM = SCHEMA["$defs"]["llm"]["properties"]


def test_every_provider_the_schema_allows_has_a_registry_entry_and_no_other() -> None:
    assert sorted(PROVIDERS) == sorted(LLM["provider"]["enum"])


def test_the_registry_lists_providers_in_the_schemas_order() -> None:
    """The order messages name them in ("use offline, scripted, …")."""
    assert list(PROVIDERS) == LLM["provider"]["enum"]


def test_the_structured_modes_are_the_schemas_in_its_order() -> None:
    assert list(decoding.MODES) == LLM["structured"]["enum"]
    purpose = SCHEMA["$defs"]["model_settings"]["properties"]["structured"]
    assert list(decoding.MODES) == purpose["enum"]


@pytest.mark.parametrize("name", list(PROVIDERS))
def test_each_entry_builds_the_provider_of_its_name(name: str, tmp_path: Path) -> None:
    cassette = tmp_path / "calls.cassette.yaml"
    cassette.write_text("version: 1\ncalls: []\n", encoding="utf-8")
    config = LLMConfig(
        provider=name,
        model="some-model",
        cassette=cassette,
        llm_class="llama_index.llms.openai_like.OpenAILike",
    )
    assert make_provider(config).name == name


def test_an_unknown_provider_is_refused_naming_every_known_one() -> None:
    with pytest.raises(LLMConfigError) as refused:
        make_provider(LLMConfig(provider="openai"))
    assert str(refused.value) == (
        "unknown LLM provider 'openai'; use offline, scripted, replay, openai_like, ollama or "
        "llama_index"
    )


@pytest.mark.parametrize("name", list(PROVIDERS))
def test_the_llm_override_accepts_each_registered_provider(name: str) -> None:
    assert parse_override(f"{name}:m", origin="--llm") == (name, "m", None)


def test_the_llm_override_refuses_a_provider_the_registry_lacks() -> None:
    with pytest.raises(LLMConfigError, match="use one of offline, scripted, replay"):
        parse_override("openai:gpt", origin="--llm")
