"""`runner mcp`: a pipeline and the Model Context Protocol (docs/cli.md#runner-mcp).

    runner mcp list PIPELINE      start the pipeline's MCP servers, list their tools, and check
                                  its `mcp` tools against them (as `runner validate --online`)
    runner mcp serve PATHS…       serve the pipelines as MCP tools over stdio (desktop clients)

Both need the `mcp` extra.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from runner.cli import options
from runner.cli.run import friendly_errors

if TYPE_CHECKING:
    from runner.mcp_client.online import OnlineReport


@click.group("mcp")
def command() -> None:
    """Use a pipeline's MCP servers, or serve pipelines as MCP tools."""


@command.command("list")
@click.argument("pipeline", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="text for people, json for tools.",
)
@click.option("--debug", is_flag=True, help="Show tracebacks of errors.")
def list_tools(pipeline: Path, fmt: str, debug: bool) -> None:
    """Start PIPELINE's MCP servers, list their tools and check its `mcp` tools against them.

    Exit 0: every server answered and every `mcp` tool matches a tool it lists; 1 otherwise.
    """
    with friendly_errors(debug):
        require_sdk()
        report = online_report(pipeline)
        if fmt == "json":
            click.echo(json.dumps(report_json(report), indent=2, ensure_ascii=False))
        else:
            click.echo(report_text(report))
        sys.exit(0 if report.passed else 1)


@command.command("serve")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@click.option(
    "--state",
    metavar="FILE|URL",
    help="The session store, as for `runner serve` (default: each pipeline's own file).",
)
@click.option("--llm", metavar="PROVIDER[:MODEL][@API_BASE]", help="Override the pipelines' LLM.")
@options.allow_python
@click.option("--debug", is_flag=True, help="Show tracebacks of errors.")
def serve(
    paths: tuple[Path, ...], state: str | None, llm: str | None, allow_python: bool, debug: bool
) -> None:
    """Serve the pipelines in PATHS as MCP tools over stdin and stdout.

    For a desktop MCP client, which starts this command itself: each pipeline is a tool that
    takes the user's `question` (and a `session_id` to go on with a conversation). Nothing
    but the protocol is written to stdout; messages go to stderr.
    """
    with friendly_errors(debug):
        require_sdk()
        import anyio

        from runner.serve.mcp_tools import serve_stdio
        from runner.service.pipelines import Service

        service = Service.open(paths, state=state, llm_override=llm, allow_python=allow_python)
        click.echo(f"runner mcp serve: {', '.join(service.runtimes)}", err=True)
        try:
            anyio.run(serve_stdio, service)
        finally:
            service.close()


def require_sdk() -> None:
    """A usage error naming the extra when the MCP SDK is not installed."""
    from importlib.util import find_spec

    if find_spec("mcp") is None or find_spec("mcp_types") is None:
        raise click.UsageError("MCP needs the `mcp` extra: pip install 'runner[mcp]'")


def online_report(pipeline: Path) -> OnlineReport:
    """The pipeline loaded (a PipelineError when it is not valid) and checked online."""
    from runner.config import load_pipeline
    from runner.documents.loader import read_document
    from runner.mcp_client.online import check_online

    loaded = load_pipeline(pipeline)
    return check_online(loaded, read_document(pipeline))


def report_text(report: OnlineReport) -> str:
    lines: list[str] = []
    for server in report.servers:
        lines.append(f"{server.name}:")
        if server.error is not None:
            lines.append(f"  (no tools: {server.error})")
        for tool in server.tools.values():
            used = server.used_by.get(tool.name)
            lines.append(f"  {tool.name}" + (f"  (tool {used!r})" if used else ""))
            if tool.description:
                lines.append(f"      {' '.join(tool.description.split())}")
            lines.extend(f"      {line}" for line in _arguments(tool.input_schema))
    if not report.servers:
        lines.append("the pipeline declares no mcp_servers")
    lines.extend(d.headline() for d in report.diagnostics)
    return "\n".join(lines)


def _arguments(schema: dict[str, Any]) -> list[str]:
    required = set(schema.get("required") or ())
    shown = []
    for name, spec in (schema.get("properties") or {}).items():
        kind = spec.get("type", "any") if isinstance(spec, dict) else "any"
        shown.append(f"- {name}: {kind}" + (" (required)" if name in required else ""))
    return shown


def report_json(report: OnlineReport) -> dict[str, Any]:
    return {
        "servers": [
            {
                "name": server.name,
                "error": server.error,
                "tools": [
                    {
                        "name": tool.name,
                        "description": tool.description,
                        "input_schema": tool.input_schema,
                        "output_schema": tool.output_schema,
                        "used_by": server.used_by.get(tool.name),
                    }
                    for tool in server.tools.values()
                ],
            }
            for server in report.servers
        ],
        "diagnostics": [d.to_json() for d in report.diagnostics],
        "passed": report.passed,
    }
