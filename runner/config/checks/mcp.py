"""MCP servers and the `mcp` tools that call them, checked offline (the servers are neither
started nor reached: `runner validate --online` does that): a server block of one transport
(R128), `${NAME}` references that name a variable (R129), tools that name a declared server
(R130), servers some tool uses (R131), and a stdio command given as a path that exists (R107)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from runner.config.checks.context import Checks
from runner.config.checks.paths import existing_path
from runner.config.humanize import suggestion_suffix
from runner.config.model import ENV_NAME, ENV_REFERENCE

STDIO_KEYS = ("command", "args", "env")
HTTP_KEYS = ("url", "headers")


def mcp_servers(checks: Checks) -> None:
    declared: Mapping[str, Any] = checks.data.get("mcp_servers", {})
    for name, spec in declared.items():
        server(checks, name, spec)
    used = set()
    for path, tool in checks.tool_items():
        if tool["kind"] != "mcp":
            continue
        used.add(tool["server"])
        if tool["server"] not in declared:
            names = list(declared)
            checks.emit(
                "R130",
                f"unknown MCP server `{tool['server']}`" + suggestion_suffix(tool["server"], names),
                (*path, "server"),
                hint=f"declared servers: {', '.join(names)}"
                if names
                else "declare it under `mcp_servers:` with its `command` or `url`",
            )
    for name in declared:
        if name not in used:
            checks.emit(
                "R131",
                f"no `mcp` tool uses the MCP server `{name}`",
                ("mcp_servers", name),
                hint="name it in a tool's `server:`, or remove it",
                warning=True,
                at_key=True,
            )


def server(checks: Checks, name: str, spec: Mapping[str, Any]) -> None:
    path = ("mcp_servers", name)
    stdio = [key for key in STDIO_KEYS if key in spec]
    http = [key for key in HTTP_KEYS if key in spec]
    if "url" in spec and stdio:
        checks.emit(
            "R128",
            f"the MCP server `{name}` gives `url` and `{stdio[0]}`: a server is either a "
            "program runner starts (`command`, `args`, `env`) or an endpoint (`url`, `headers`)",
            (*path, stdio[0]),
            hint="keep the keys of one of them",
            at_key=True,
        )
    elif "command" in spec and http:
        checks.emit(
            "R128",
            f"the MCP server `{name}` gives `command` and `{http[0]}`: `headers` are sent to an "
            "endpoint (`url`); a program started over stdio gets `env`",
            (*path, http[0]),
            hint="pass what the program needs in `env`",
            at_key=True,
        )
    for key in ("env", "headers"):
        for variable, value in spec.get(key, {}).items():
            references(checks, str(value), (*path, key, variable))
    command = spec.get("command", "")
    if "/" in command and not command.startswith("/"):  # a program of the pipeline's folder
        existing_path(checks, command, (*path, "command"))


def references(checks: Checks, value: str, path: tuple[str | int, ...]) -> None:
    for match in ENV_REFERENCE.finditer(value):
        if not ENV_NAME.match(match.group(1)):
            checks.emit(
                "R129",
                f"`{match.group(0)}` does not name an environment variable",
                path,
                hint="write `${NAME}` with a variable name of letters, digits and underscores, "
                "e.g. `Bearer ${TICKETS_TOKEN}`",
            )
