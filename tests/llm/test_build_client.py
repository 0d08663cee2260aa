"""build_client: one pipeline, any provider, no other change."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

from runner.config.model import LLMConfig, Pipeline, ScriptRule
from runner.llm import LLMConfigError, build_client
from runner.llm.prompts import Passage, Prompts
from runner.sources import Source

from .helpers import pipeline, run, tool

PAGE = Passage("The kettle boils a litre in three minutes.", (Source("kettle.md", 1),))
QUESTION = "How fast does the kettle boil a litre?"


def answer_with(override: str | None, configured: Pipeline, record: Path | None = None) -> str:
    client = build_client(
        configured.llm, pipeline=configured, override=override, record=record, environ={}
    )
    return run(Prompts(client, configured).answer(QUESTION, [], [PAGE])).text


def test_one_pipeline_runs_on_every_local_provider(tmp_path: Path) -> None:
    cassette = tmp_path / "answers.cassette.yaml"
    llm = LLMConfig(
        provider="scripted",
        script=(ScriptRule(reply="Three minutes.", purpose="answer"),),
        cassette=cassette,
    )
    configured = pipeline(tmp_path, tool("kettle"), llm=llm)
    assert answer_with(None, configured, record=cassette) == "Three minutes."
    assert answer_with("replay", configured) == "Three minutes."
    assert answer_with("offline", configured) == (
        "The kettle boils a litre in three minutes. [kettle.md p. 1]"
    )


def test_runner_llm_in_the_environment_switches_the_provider(tmp_path: Path) -> None:
    configured = pipeline(tmp_path, llm=LLMConfig(provider="scripted"))
    client = build_client(configured.llm, pipeline=configured, environ={"RUNNER_LLM": "offline"})
    assert client.provider.name == "offline"


def test_the_cache_flag_turns_the_cache_on_in_the_state_folder(tmp_path: Path) -> None:
    configured = pipeline(tmp_path, llm=LLMConfig(provider="openai_like", model="m"))
    client = build_client(configured.llm, pipeline=configured, cache=True, environ={})
    assert client.cache is not None
    assert client.cache.path == tmp_path / ".runner" / "llm-cache.sqlite"
    client.close()


def test_the_flag_can_turn_a_configured_cache_off(tmp_path: Path) -> None:
    llm = LLMConfig(provider="openai_like", model="m", cache=True)
    client = build_client(llm, pipeline=pipeline(tmp_path, llm=llm), cache=False, environ={})
    assert client.cache is None


def test_local_providers_are_never_cached(tmp_path: Path) -> None:
    client = build_client(LLMConfig(cache=True, cache_path=tmp_path / "c.sqlite"), environ={})
    assert client.cache is None


@pytest.mark.parametrize(
    ("llm", "message"),
    [
        (LLMConfig(provider="openai_like"), "provider openai_like needs a model"),
        (LLMConfig(provider="replay"), "provider replay needs `llm.cassette: FILE`"),
        (LLMConfig(provider="scripted", fallback="ollama"), "llm.fallback can only be `offline`"),
    ],
)
def test_settings_that_cannot_work_say_how_to_fix_them(llm: LLMConfig, message: str) -> None:
    with pytest.raises(LLMConfigError, match=message):
        build_client(llm, environ={})


def test_building_a_client_leaves_the_config_untouched(tmp_path: Path) -> None:
    llm = LLMConfig(provider="scripted")
    before = dataclasses.asdict(llm)
    build_client(llm, override="offline:tiny", environ={})
    assert dataclasses.asdict(llm) == before


def test_a_missing_extra_says_which_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "llama_index.llms.ollama", None)  # as if not installed
    with pytest.raises(LLMConfigError, match=r"pip install 'runner\[ollama\]'"):
        build_client(LLMConfig(provider="ollama", model="llama3.1"), environ={})
