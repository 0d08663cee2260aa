"""What `runner serve` starts with: each setting's name, default and check, stated once here.

`ServeSettings` is what the app is built from (runner.cli.webapp), `Listening` what uvicorn is
started with; `runner serve`'s options take their defaults and checks from both
(runner.cli.serve), and the app's own defaults (runner.serve.app, runner.serve.http) read
`DEFAULTS`. The limits the service core enforces (a message's length, the wait for a busy
session, rounds in flight) are the service's own defaults (runner.service.defaults): the
service sits below serve and cannot read this module.

With `--workers N`, uvicorn starts N processes that each import `runner.cli.webapp:worker_app`
and build the same app from the settings the command put in RUNNER_SERVE_SETTINGS (JSON)."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from runner.service import defaults

SETTINGS_ENV = "RUNNER_SERVE_SETTINGS"


def at_least(minimum: int, default: int | None) -> Any:
    """A setting whose option refuses values below `minimum`."""
    return field(default=default, metadata={"minimum": minimum})


@dataclass(frozen=True)
class ServeSettings:
    paths: list[str]
    state: str | None = None
    llm: str | None = None
    allow_python: bool = False
    build: bool = True
    token_file: str | None = None
    max_body_bytes: int = 1 << 20  # a larger request body is refused with 413
    max_message_chars: int = defaults.MAX_MESSAGE_CHARS
    lock_wait_s: float = defaults.LOCK_WAIT_S
    drain_timeout_s: float = 30.0  # on shutdown, the wait for rounds in flight
    tokens: list[str] = field(default_factory=list)  # resolved by the command
    playground: bool = False  # mount the playground at /playground (runner.playground)
    host: str = "127.0.0.1"  # the bound address, a name the service answers to
    allowed_hosts: list[str] = field(default_factory=list)  # more names (--allowed-host)
    max_rounds_in_flight: int = at_least(1, defaults.MAX_ROUNDS_IN_FLIGHT)
    max_rounds_per_client: int | None = at_least(1, None)  # None: a quarter of the above
    body_timeout_s: float = 10.0  # a request body slower than this is refused with 408
    session_ttl_s: float | None = None  # sessions idle longer are deleted (--session-ttl)
    secret: str = ""  # signs the playground's CSRF tokens; the same in every worker
    mcp: bool = False  # serve the pipelines as MCP tools at /mcp (runner.serve.mcp_tools)

    def to_env(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_env(cls) -> ServeSettings:
        return cls(**json.loads(os.environ[SETTINGS_ENV]))


@dataclass(frozen=True)
class Listening:
    """How uvicorn listens: told to uvicorn by the command, never to the app's workers."""

    port: int = 8000
    workers: int = at_least(1, 1)  # processes; more than one needs a shared store (--state)
    max_connections: int = at_least(1, 1000)  # uvicorn's limit_concurrency; more get 503
    log_level: str = "info"
    keep_alive_s: int = 5  # an idle connection is closed after this


DEFAULTS = ServeSettings(paths=[])
LISTENING = Listening()


def minimum(settings: type[ServeSettings] | type[Listening], name: str) -> int | None:
    """The least value the setting `name` takes (None: no lower bound)."""
    found = {item.name: item for item in fields(settings)}[name]
    value = found.metadata.get("minimum")
    return int(value) if value is not None else None
