"""What `runner serve` starts with, and how each worker process builds its app from it.

With `--workers N`, uvicorn starts N processes that each import `runner.cli.webapp:worker_app`
and build the same app from the settings the command put in RUNNER_SERVE_SETTINGS (JSON)."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field

SETTINGS_ENV = "RUNNER_SERVE_SETTINGS"


@dataclass(frozen=True)
class ServeSettings:
    paths: list[str]
    state: str | None = None
    llm: str | None = None
    allow_python: bool = False
    build: bool = True
    token_file: str | None = None
    max_body_bytes: int = 1 << 20
    max_message_chars: int = 8_000
    lock_wait_s: float = 30.0
    drain_timeout_s: float = 30.0
    tokens: list[str] = field(default_factory=list)  # resolved by the command
    playground: bool = False  # mount the playground at /playground (runner.playground)
    mcp: bool = False  # serve the pipelines as MCP tools at /mcp (runner.serve.mcp_tools)

    def to_env(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_env(cls) -> ServeSettings:
        return cls(**json.loads(os.environ[SETTINGS_ENV]))
