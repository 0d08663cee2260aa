"""Which provider and model a run uses: `--llm` beats `--llm-script`, which beats the
`RUNNER_LLM` environment variable, which beats the pipeline's `llm` block.

`PROVIDER[:MODEL][@API_BASE]` is the override syntax (`ollama:llama3.1`,
`openai_like:gpt-4o-mini`, `openai_like:smollm2@http://127.0.0.1:8080/v1`, `offline`).
When an override changes the provider without naming a model, the file's models
(the block's and the per-purpose ones) are dropped, since a model name rarely means anything to
another provider; when it names a model, that model is used for every purpose.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from pathlib import Path

from runner.config.model import LLMConfig, ModelSettings
from runner.llm.errors import LLMConfigError
from runner.llm.providers import PROVIDERS
from runner.llm.types import Purpose

ENV_VARIABLE = "RUNNER_LLM"


def parse_override(spec: str, *, origin: str) -> tuple[str, str | None, str | None]:
    """`"ollama:llama3.1"` -> `("ollama", "llama3.1", None)`,
    `"openai_like:m@http://host/v1"` -> `("openai_like", "m", "http://host/v1")`; `origin`
    names the flag or variable."""
    provider, _, rest = spec.strip().partition(":")
    provider = provider.strip()
    model, _, api_base = rest.partition("@")
    if provider not in PROVIDERS:
        raise LLMConfigError(
            f"{origin}: unknown LLM provider {provider!r}; use one of {', '.join(PROVIDERS)}, "
            "optionally followed by :MODEL (for example ollama:llama3.1)"
        )
    return provider, (model.strip() or None), (api_base.strip() or None)


def resolve(
    config: LLMConfig,
    *,
    override: str | None = None,
    script: Path | None = None,
    cassette: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> LLMConfig:
    """The LLM settings in force after the command-line flags and the environment.

    `--llm` beats `--llm-script FILE` and `--replay CASSETTE` (each of which picks its provider
    with that file), which beat `$RUNNER_LLM`, which beats the file."""
    environ = os.environ if environ is None else environ
    if override:
        return _apply(config, *parse_override(override, origin="--llm"))
    if script is not None:
        return dataclasses.replace(config, provider="scripted", script_file=script)
    if cassette is not None:
        return dataclasses.replace(config, provider="replay", cassette=cassette)
    env_spec = environ.get(ENV_VARIABLE, "").strip()
    if env_spec:
        return _apply(config, *parse_override(env_spec, origin=f"${ENV_VARIABLE}"))
    return config


def _apply(config: LLMConfig, provider: str, model: str | None, api_base: str | None) -> LLMConfig:
    if api_base is not None:
        config = dataclasses.replace(config, api_base=api_base)
    if model is not None:
        purposes = {name: dataclasses.replace(s, model=None) for name, s in config.purposes.items()}
        return dataclasses.replace(config, provider=provider, model=model, purposes=purposes)
    if provider == config.provider:
        return config
    purposes = {name: dataclasses.replace(s, model=None) for name, s in config.purposes.items()}
    return dataclasses.replace(config, provider=provider, model=None, purposes=purposes)


def model_settings(config: LLMConfig, purpose: Purpose) -> ModelSettings:
    """The model, temperature, max_tokens, structured mode and context window for one purpose
    (`llm.purposes.<purpose>` wins). The window stays None when neither says: the provider may
    know it (see `context_window`)."""
    specific = config.purposes.get(purpose.value, ModelSettings())
    return ModelSettings(
        model=specific.model or config.model,
        temperature=config.temperature if specific.temperature is None else specific.temperature,
        max_tokens=specific.max_tokens or config.max_tokens,
        structured=specific.structured or config.structured,
        context_window=specific.context_window or config.context_window,
    )
