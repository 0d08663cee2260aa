"""The credentials a pipeline declares: the value of each `${NAME}` its MCP servers read into
`headers`, `env` and `url`, and the key its `llm.api_key_env` names. The loader tells them to
runner.text.credentials, which hides them in everything that leaves runner."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping

from runner.config.model import ENV_REFERENCE, Pipeline


def declared_secrets(pipeline: Pipeline, environ: Mapping[str, str] | None = None) -> list[str]:
    """The values (set in `environ`, the process's environment by default) of the variables
    the pipeline reads its credentials from."""
    environ = os.environ if environ is None else environ
    return [environ[name] for name in sorted(set(_names(pipeline))) if environ.get(name)]


def _names(pipeline: Pipeline) -> Iterator[str]:
    for server in pipeline.mcp_servers.values():
        for value in (*server.env.values(), *server.headers.values(), server.url or ""):
            yield from ENV_REFERENCE.findall(str(value))
    if pipeline.llm.api_key_env:
        yield pipeline.llm.api_key_env
