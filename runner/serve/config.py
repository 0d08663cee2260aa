"""What `runner serve` starts with, and how each worker process builds its app from it.

With `--workers N`, uvicorn starts N processes that each import `runner.serve.config:worker_app`
and build the same app from the settings the command put in RUNNER_SERVE_SETTINGS (JSON)."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from starlette.applications import Starlette

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

    def to_env(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_env(cls) -> ServeSettings:
        return cls(**json.loads(os.environ[SETTINGS_ENV]))


def build_app(settings: ServeSettings) -> Starlette:
    from runner.serve.app import create_app
    from runner.serve.service import Limits, Service

    service = Service.open(
        [Path(p) for p in settings.paths],
        state=settings.state,
        limits=Limits(
            max_message_chars=settings.max_message_chars, lock_wait_s=settings.lock_wait_s
        ),
        llm_override=settings.llm,
        allow_python=settings.allow_python,
        build_indexes=settings.build,
    )
    extra_routes, public = [], []
    if settings.playground:
        from runner.playground.serving import playground_routes

        routes, prefix = playground_routes(service, settings.tokens)
        extra_routes, public = routes, [prefix]
    return create_app(
        service,
        tokens=settings.tokens,
        max_body_bytes=settings.max_body_bytes,
        drain_timeout_s=settings.drain_timeout_s,
        extra_routes=extra_routes,
        public_prefixes=public,
    )


def worker_app() -> Starlette:
    """The app of one worker process (uvicorn's factory with --workers N)."""
    return build_app(ServeSettings.from_env())
