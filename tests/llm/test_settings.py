"""Which provider and model are in force: --llm > --llm-script > $RUNNER_LLM > the file."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from runner.config.model import LLMConfig, ModelSettings
from runner.llm import LLMConfigError
from runner.llm.settings import model_settings, resolve
from runner.llm.types import Purpose

FILE = LLMConfig(
    provider="openai_like",
    model="big",
    temperature=0.2,
    max_tokens=500,
    purposes={"suitability": ModelSettings(model="small", max_tokens=50)},
)


def test_the_file_decides_without_overrides() -> None:
    assert resolve(FILE, environ={}) is FILE


def test_the_environment_beats_the_file() -> None:
    resolved = resolve(FILE, environ={"RUNNER_LLM": "ollama:llama3.1"})
    assert (resolved.provider, resolved.model) == ("ollama", "llama3.1")


def test_the_flag_beats_the_environment() -> None:
    resolved = resolve(FILE, override="offline", environ={"RUNNER_LLM": "ollama:llama3.1"})
    assert resolved.provider == "offline"


def test_a_script_flag_beats_the_environment_but_not_llm(tmp_path: Path) -> None:
    script = tmp_path / "s.yaml"
    by_script = resolve(FILE, script=script, environ={"RUNNER_LLM": "offline"})
    assert (by_script.provider, by_script.script_file) == ("scripted", script)
    assert resolve(FILE, override="offline", script=script, environ={}).provider == "offline"


def test_a_model_in_the_override_is_used_for_every_purpose() -> None:
    resolved = resolve(FILE, override="openai_like:medium", environ={})
    assert model_settings(resolved, Purpose.SUITABILITY).model == "medium"
    assert model_settings(resolved, Purpose.SUITABILITY).max_tokens == 50


def test_changing_provider_without_a_model_drops_the_files_models() -> None:
    resolved = resolve(FILE, override="ollama", environ={})
    assert resolved.model is None
    assert model_settings(resolved, Purpose.SUITABILITY).model is None


def test_per_purpose_settings_override_the_block() -> None:
    assert model_settings(FILE, Purpose.SUITABILITY) == ModelSettings(
        "small", 0.2, 50, "json_schema"
    )
    assert model_settings(FILE, Purpose.ANSWER) == ModelSettings("big", 0.2, 500, "json_schema")


def test_structured_mode_and_window_have_per_purpose_overrides() -> None:
    config = dataclasses.replace(
        FILE,
        structured="json_object",
        context_window=4096,
        purposes={"gatekeeper": ModelSettings(structured="prompt", context_window=2048)},
    )
    gate = model_settings(config, Purpose.GATEKEEPER)
    answer = model_settings(config, Purpose.ANSWER)
    assert (gate.structured, gate.context_window) == ("prompt", 2048)
    assert (answer.structured, answer.context_window) == ("json_object", 4096)


def test_an_override_can_name_the_server() -> None:
    resolved = resolve(FILE, override="openai_like:smollm2@http://127.0.0.1:8080/v1", environ={})
    assert (resolved.provider, resolved.model, resolved.api_base) == (
        "openai_like",
        "smollm2",
        "http://127.0.0.1:8080/v1",
    )


def test_an_ollama_model_tag_survives_the_override_syntax() -> None:
    resolved = resolve(FILE, override="ollama:llama3.1:8b", environ={})
    assert (resolved.model, resolved.api_base) == ("llama3.1:8b", FILE.api_base)


def test_an_unknown_provider_names_where_it_came_from() -> None:
    with pytest.raises(LLMConfigError, match=r"\$RUNNER_LLM: unknown LLM provider 'gpt'"):
        resolve(FILE, environ={"RUNNER_LLM": "gpt:4"})


def test_replay_flag_picks_the_replay_provider_on_its_cassette_below_llm() -> None:
    replayed = resolve(LLMConfig(), cassette=Path("c.yaml"), environ={"RUNNER_LLM": "offline"})
    assert (replayed.provider, replayed.cassette) == ("replay", Path("c.yaml"))
    assert resolve(LLMConfig(), override="offline", cassette=Path("c.yaml")).provider == "offline"
