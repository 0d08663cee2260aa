"""Providers: where a request's reply text comes from. Chosen by `llm.provider`."""

from __future__ import annotations

from pathlib import Path

from runner.config.model import LLMConfig
from runner.llm.errors import LLMConfigError
from runner.llm.providers.base import Provider, ProviderReply

__all__ = ["Provider", "ProviderReply", "make_provider"]


def make_provider(config: LLMConfig, *, origin: Path | None = None) -> Provider:
    """`origin` is the pipeline file, named in messages about inline script rules."""
    name = config.provider
    if name == "offline":
        from runner.llm.providers.offline import OfflineProvider

        return OfflineProvider()
    if name == "scripted":
        return _scripted(config, origin)
    if name == "replay":
        from runner.llm.cassette import ReplayProvider

        if config.cassette is None:
            raise LLMConfigError(
                "provider replay needs `llm.cassette: FILE` (a cassette written by "
                "`runner run … --record FILE`)"
            )
        return ReplayProvider(config.cassette)
    if name == "llama_index":
        from runner.llm.providers.llama_index_class import LlamaIndexClassProvider

        return LlamaIndexClassProvider(config)
    if name in ("openai_like", "ollama"):
        from runner.llm.providers.remote import LlamaIndexProvider

        return LlamaIndexProvider(name, config)
    raise LLMConfigError(
        f"unknown LLM provider {name!r}; use offline, scripted, replay, openai_like, ollama or "
        "llama_index"
    )


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
