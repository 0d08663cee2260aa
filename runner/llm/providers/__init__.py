"""Providers: where a request's reply text comes from, one per `llm.provider` name.

`PROVIDERS` is the registry, read in one sitting: each name with the function that builds its
provider from the pipeline's `llm` block (`origin`, the pipeline file, is named in messages
about inline script rules). Each function imports its module when called, so a run with the
offline provider never imports llama-index. A new provider is a module with its class and an
entry here; the schema's `llm.provider` enum names the same set (tests/llm/test_registries.py).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from runner.config.model import LLMConfig
from runner.llm.errors import LLMConfigError
from runner.llm.providers.base import Provider, ProviderReply

__all__ = ["PROVIDERS", "Provider", "ProviderFactory", "ProviderReply", "make_provider"]

ProviderFactory = Callable[[LLMConfig, Path | None], Provider]


def make_provider(config: LLMConfig, *, origin: Path | None = None) -> Provider:
    """The provider `config.provider` names, built from `config`."""
    factory = PROVIDERS.get(config.provider)
    if factory is None:
        raise LLMConfigError(f"unknown LLM provider {config.provider!r}; use {_names()}")
    return factory(config, origin)


def _names() -> str:
    *others, last = PROVIDERS
    return f"{', '.join(others)} or {last}"


def _offline(config: LLMConfig, origin: Path | None) -> Provider:
    from runner.llm.providers.offline import OfflineProvider

    return OfflineProvider()


def _scripted(config: LLMConfig, origin: Path | None) -> Provider:
    from runner.llm.providers.offline import OfflineProvider
    from runner.llm.providers.scripted import (
        ScriptedProvider,
        load_script_file,
        rules_from_config,
    )

    rules, fallback = [], config.fallback
    if config.script_file is not None:
        file_rules, file_fallback = load_script_file(config.script_file)
        rules.extend(file_rules)
        fallback = fallback or file_fallback
    rules.extend(rules_from_config(config.script, str(origin or "llm.script")))
    if fallback not in (None, "offline"):
        raise LLMConfigError(f"llm.fallback can only be `offline` (got {fallback!r})")
    return ScriptedProvider(rules, OfflineProvider() if fallback == "offline" else None)


def _replay(config: LLMConfig, origin: Path | None) -> Provider:
    from runner.llm.cassette import ReplayProvider

    if config.cassette is None:
        raise LLMConfigError(
            "provider replay needs `llm.cassette: FILE` (a cassette written by "
            "`runner run … --record FILE`)"
        )
    return ReplayProvider(config.cassette)


def _openai_like(config: LLMConfig, origin: Path | None) -> Provider:
    from runner.llm.providers.model_server import ModelServerProvider

    return ModelServerProvider("openai_like", config)


def _ollama(config: LLMConfig, origin: Path | None) -> Provider:
    from runner.llm.providers.model_server import ModelServerProvider

    return ModelServerProvider("ollama", config)


def _llama_index(config: LLMConfig, origin: Path | None) -> Provider:
    from runner.llm.providers.llama_index_class import LlamaIndexClassProvider

    return LlamaIndexClassProvider(config)


# `llm.provider` -> what builds it. Local: offline (runner's own reading, docs/offline.md),
# scripted (rules in the pipeline or a file), replay (a recorded cassette). Served: openai_like
# (any OpenAI-compatible server) and ollama, both runner.llm.providers.model_server; llama_index
# (any llama-index LLM class named by `llm.class`).
PROVIDERS: dict[str, ProviderFactory] = {
    "offline": _offline,
    "scripted": _scripted,
    "replay": _replay,
    "openai_like": _openai_like,
    "ollama": _ollama,
    "llama_index": _llama_index,
}
