"""`runner serve PIPELINE_OR_DIR…`: the pipelines as an HTTP service (docs/serve.md).

The native API, the OpenAI-compatible API, health checks and metrics, on uvicorn. Each worker
loads every pipeline and opens its indexes once; sessions live in the store `--state` names
(a PostgreSQL URL is what several workers, on one machine or many, share).
"""

from __future__ import annotations

import ipaddress
import os
import secrets
import tempfile
from pathlib import Path
from typing import Any

import click

from runner.cli import options
from runner.cli.run import friendly_errors
from runner.cli.sessions import Duration
from runner.serve.config import DEFAULTS, LISTENING, Listening, ServeSettings, minimum


@click.command("serve")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option(
    "--host",
    default=DEFAULTS.host,
    show_default=True,
    help="The address to bind (IPv6 as ::1 or [::1]).",
)
@click.option(
    "--port", default=LISTENING.port, show_default=True, type=int, help="The port to bind."
)
@click.option(
    "--workers",
    default=LISTENING.workers,
    show_default=True,
    type=click.IntRange(min=minimum(Listening, "workers")),
    help="Worker processes; more than one needs a store they can share (--state).",
)
@click.option(
    "--state",
    metavar="FILE|URL",
    help="The session store: a postgresql:// URL (shared by workers) or a SQLite file (also "
    "RUNNER_STATE; default: each pipeline's .runner/state.sqlite).",
)
@click.option(
    "--token-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Bearer tokens, one a line (also RUNNER_SERVE_TOKENS, comma-separated).",
)
@click.option(
    "--insecure",
    is_flag=True,
    help="Allow a non-loopback --host without bearer tokens (anyone who reaches it may use it).",
)
@click.option("--llm", metavar="PROVIDER[:MODEL][@API_BASE]", help="Override the pipelines' LLM.")
@options.allow_python
@click.option("--no-build", is_flag=True, help="Fail instead of building a missing index.")
@click.option(
    "--max-body-bytes",
    default=DEFAULTS.max_body_bytes,
    show_default=True,
    type=int,
    help="Request size limit.",
)
@click.option(
    "--max-message-chars",
    default=DEFAULTS.max_message_chars,
    show_default=True,
    type=int,
    help="Message limit.",
)
@click.option(
    "--lock-wait",
    default=DEFAULTS.lock_wait_s,
    show_default=True,
    type=float,
    help="Seconds a request waits for its session (busy with another request) before a 409.",
)
@click.option(
    "--drain-timeout",
    default=DEFAULTS.drain_timeout_s,
    show_default=True,
    type=float,
    help="On shutdown, seconds to let rounds in flight finish (the rest resume on next call).",
)
@click.option(
    "--playground",
    is_flag=True,
    help="Also serve the playground at /playground (with tokens, behind a token login).",
)
@click.option(
    "--allowed-host",
    "allowed_host",
    multiple=True,
    metavar="NAME",
    help="A Host name to answer besides the bound address and loopback names (repeatable; "
    "the name clients use, e.g. runner.example.com, or an IPv6 address: [fd00::2]).",
)
@click.option(
    "--session-ttl",
    type=Duration(),
    help="Delete sessions unused for this long (30d, 12h …), at start and every hour.",
)
@click.option(
    "--max-rounds-in-flight",
    default=DEFAULTS.max_rounds_in_flight,
    show_default=True,
    type=click.IntRange(min=minimum(ServeSettings, "max_rounds_in_flight")),
    help="Rounds a worker runs at once; more get 503 with Retry-After.",
)
@click.option(
    "--max-rounds-per-client",
    default=DEFAULTS.max_rounds_per_client,
    type=click.IntRange(min=minimum(ServeSettings, "max_rounds_per_client")),
    help="Rounds one client (token) runs at once on a worker; more get 503 with Retry-After. "
    "Default: a quarter of --max-rounds-in-flight.",
)
@click.option(
    "--max-connections",
    default=LISTENING.max_connections,
    show_default=True,
    type=click.IntRange(min=minimum(Listening, "max_connections")),
    help="Open connections a worker accepts (uvicorn's limit_concurrency); more get 503.",
)
@click.option(
    "--body-timeout",
    default=DEFAULTS.body_timeout_s,
    show_default=True,
    type=float,
    help="Seconds a request body may take to arrive (408 after).",
)
@click.option(
    "--mcp",
    is_flag=True,
    help="Also serve each pipeline as an MCP tool at /mcp (streamable HTTP; needs the mcp extra).",
)
@click.option(
    "--log-level", default=LISTENING.log_level, show_default=True, help="uvicorn's log level."
)
@click.option("--debug", is_flag=True, help="Show tracebacks of errors.")
def command(
    paths: tuple[Path, ...],
    host: str,
    port: int,
    workers: int,
    state: str | None,
    token_file: Path | None,
    insecure: bool,
    llm: str | None,
    allow_python: bool,
    no_build: bool,
    max_body_bytes: int,
    max_message_chars: int,
    lock_wait: float,
    drain_timeout: float,
    playground: bool,
    allowed_host: tuple[str, ...],
    session_ttl: float | None,
    max_rounds_in_flight: int,
    max_rounds_per_client: int | None,
    max_connections: int,
    body_timeout: float,
    mcp: bool,
    log_level: str,
    debug: bool,
) -> None:
    """Serve the pipelines in PATHS (files or folders) over HTTP.

    POST /v1/pipelines/DOMAIN/rounds answers like `runner run --json`; /v1/chat/completions
    speaks the OpenAI API (a model per domain). Without bearer tokens the service binds to
    loopback addresses only.
    """
    with friendly_errors(debug):
        from runner.cli.webapp import build_app
        from runner.serve.config import SETTINGS_ENV
        from runner.serve.http import load_tokens

        host = checked_hosts(host, allowed_host)
        tokens = load_tokens(token_file)
        refuse_open_binding(host, tokens, insecure, playground)
        if mcp:
            from runner.cli.mcp import require_sdk

            require_sdk()
        settings = ServeSettings(
            paths=[str(p) for p in paths],
            state=state,
            llm=llm,
            allow_python=allow_python,
            build=not no_build,
            max_body_bytes=max_body_bytes,
            max_message_chars=max_message_chars,
            lock_wait_s=lock_wait,
            drain_timeout_s=drain_timeout,
            tokens=tokens,
            playground=playground,
            host=host,
            allowed_hosts=list(allowed_host),
            max_rounds_in_flight=max_rounds_in_flight,
            max_rounds_per_client=max_rounds_per_client,
            body_timeout_s=body_timeout,
            session_ttl_s=session_ttl,
            secret=secrets.token_hex(32),  # the same in every worker: forms post to any
            mcp=mcp,
        )
        import uvicorn

        common: dict[str, Any] = {
            "host": host,
            "port": port,
            "log_level": log_level,
            "timeout_graceful_shutdown": int(drain_timeout) or None,
            "access_log": log_level == "debug",
            "limit_concurrency": max_connections,
            "timeout_keep_alive": LISTENING.keep_alive_s,
        }
        if workers == 1:
            app = build_app(settings)  # load errors are told here, before binding
            click.echo(f"runner serve: {', '.join(app.state.service.runtimes)}", err=True)
            uvicorn.run(app, **common)
            return
        os.environ[SETTINGS_ENV] = settings.to_env()
        os.environ.setdefault("PROMETHEUS_MULTIPROC_DIR", tempfile.mkdtemp(prefix="runner-m-"))
        build_app(settings).state.service.close()  # check once that everything loads
        uvicorn.run("runner.cli.webapp:worker_app", factory=True, workers=workers, **common)


def checked_hosts(host: str, allowed: tuple[str, ...]) -> str:
    """The address to bind: `--host` as the socket takes it, an IPv6 address out of the
    brackets it may be written in (`[::1]`). Each `--allowed-host` is checked first, so that
    a name no Host could match is refused naming the option."""
    from runner.serve.hosts import host_name_problem, ipv6_literal

    for name in allowed:
        if problem := host_name_problem(name):
            raise click.BadParameter(
                f"{name!r} cannot be a Host name: {problem}", param_hint="--allowed-host"
            )
    if not host.startswith("["):
        return host
    if not host.endswith("]") or ipv6_literal(host) is None:
        raise click.BadParameter(
            f"{host!r} is not an IPv6 address in brackets: write ::1 or [::1]", param_hint="--host"
        )
    return host[1:-1]


def refuse_open_binding(
    host: str, tokens: list[str], insecure: bool, playground: bool = False
) -> None:
    if tokens or is_loopback(host):
        return
    if playground:  # it writes test files and runs them: never open to the network
        raise click.UsageError(
            f"--host {host} is reachable from other machines: the playground is served there "
            "only with bearer tokens (RUNNER_SERVE_TOKENS or --token-file), --insecure or not"
        )
    if insecure:
        return
    raise click.UsageError(
        f"--host {host} is reachable from other machines and no bearer token is set: set "
        "RUNNER_SERVE_TOKENS or --token-file, or pass --insecure to serve without one"
    )


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
