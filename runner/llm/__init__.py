"""runner's LLM layer: one async client for every purpose, provider and policy.

    client = build_client(pipeline.llm, pipeline=pipeline, override=cli_llm, record=cassette)
    prompts = Prompts(client, pipeline)            # runner.llm.prompts
    chosen = await prompts.suitability(task.task_prompt, candidates)
    ...
    result["stats"] = client.stats                 # and client.calls -> `llm.call` trace events

Importing this package is cheap: providers (and llama-index) load when a client is built or
first used.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from runner.llm.errors import (
    CassetteError,
    CassetteMissError,
    LLMCallError,
    LLMConfigError,
    LLMError,
    LLMReplyError,
    ScriptError,
    ScriptMissError,
)
from runner.llm.types import LLMClient, LLMReply, LLMRequest, Purpose

if TYPE_CHECKING:
    from runner.config.model import LLMConfig, Pipeline
    from runner.llm.client import ProviderClient

__all__ = [
    "CassetteError",
    "CassetteMissError",
    "LLMCallError",
    "LLMClient",
    "LLMConfigError",
    "LLMError",
    "LLMReply",
    "LLMReplyError",
    "LLMRequest",
    "ProviderClient",
    "Purpose",
    "ScriptError",
    "ScriptMissError",
    "build_client",
]

CACHE_FILE = "llm-cache.sqlite"


def build_client(
    config: LLMConfig,
    *,
    pipeline: Pipeline | None = None,
    override: str | None = None,
    record: Path | None = None,
    cache: bool | None = None,
    script: Path | None = None,
    cassette: Path | None = None,
    environ: dict[str, str] | None = None,
) -> ProviderClient:
    """The run's client.

    override: `--llm PROVIDER[:MODEL]`; beats `script` (`--llm-script FILE`, which selects the
    scripted provider with that file's rules first) and `cassette` (`--replay CASSETTE`, the
    replay provider on that cassette), which beat `$RUNNER_LLM`, which beats `config`.
    record: a cassette path every answered request is written to. cache: `--cache` (None:
    `llm.cache` decides)."""
    from runner.llm.accepted_modes import FILE as ACCEPTED_MODES_FILE
    from runner.llm.accepted_modes import AcceptedModes
    from runner.llm.cache import ResponseCache
    from runner.llm.cassette import Recorder
    from runner.llm.client import ProviderClient
    from runner.llm.providers import make_provider
    from runner.llm.settings import resolve

    resolved = resolve(
        config,
        override=override,
        script=script,
        cassette=cassette,
        environ=os.environ if environ is None else environ,
    )
    provider = make_provider(resolved, origin=pipeline.path if pipeline else None)
    # local providers are deterministic already; caching them would hide a script's `times`
    use_cache = (resolved.cache if cache is None else cache) and provider.cacheable
    response_cache = ResponseCache(_cache_path(resolved, pipeline)) if use_cache else None
    return ProviderClient(
        provider,
        resolved,
        cache=response_cache,
        recorder=Recorder(record) if record is not None else None,
        # a server's refusal of a structured mode, kept for the next process (not for a run
        # with no pipeline: nowhere of its own to keep it)
        accepted_modes=AcceptedModes(pipeline.state_folder / ACCEPTED_MODES_FILE)
        if pipeline is not None
        else None,
    )


def _cache_path(config: LLMConfig, pipeline: Pipeline | None) -> Path:
    if config.cache_path is not None:
        return config.cache_path
    folder = pipeline.state_folder if pipeline is not None else Path(".runner")
    return folder / CACHE_FILE


def __getattr__(name: str) -> Any:
    if name == "ProviderClient":
        from runner.llm.client import ProviderClient

        return ProviderClient
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
