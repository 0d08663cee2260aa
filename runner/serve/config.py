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
    host: str = "127.0.0.1"  # the bound address, a name the service answers to
    allowed_hosts: list[str] = field(default_factory=list)  # more names (--allowed-host)
    max_rounds_in_flight: int = 256
    max_rounds_per_client: int | None = None  # None: a quarter of max_rounds_in_flight
    body_timeout_s: float = 10.0
    session_ttl_s: float | None = None  # sessions idle longer are deleted (--session-ttl)
    secret: str = ""  # signs the playground's CSRF tokens; the same in every worker
    mcp: bool = False  # serve the pipelines as MCP tools at /mcp (runner.serve.mcp_tools)

    def to_env(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_env(cls) -> ServeSettings:
        return cls(**json.loads(os.environ[SETTINGS_ENV]))
