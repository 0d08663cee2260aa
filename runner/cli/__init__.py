"""The `runner` command line: one module per command, imported only when that command runs.

Keeping the group lazy is what keeps `runner --help` fast: no command pulls llama-index (or
anything heavy) in until it is the command being run.

A new command is a module `runner/cli/<name>.py` whose `command` is a click command, listed in
COMMANDS with its one-line help. At its top it imports only click and runner.cli's light helpers;
what the command runs (the application layer, retrieval, jsonschema, rich, numpy, llama-index)
is imported inside the command's function, with a comment saying why, so that `runner --help`
and the other commands never pay for it (tests/cli/test_run_imports.py checks `runner run`).
"""

from __future__ import annotations

import importlib

import click

# command name -> (module under runner.cli, one-line help shown by `runner --help`)
COMMANDS: dict[str, tuple[str, str]] = {
    "validate": ("validate", "Check pipeline files against the schema and the semantic rules."),
    "run": ("run", "Run one round of a pipeline on a message."),
    "chat": ("chat", "Talk to a pipeline interactively, clarifying questions included."),
    "index": ("index", "Build and store the indexes of a pipeline's corpora."),
    "new": ("new", "Write a first help-desk pipeline over a folder of documents."),
    "test": ("test_cmd", "Run a pipeline's test cases with a scripted or replayed LLM."),
    "eval": ("eval", "Measure a pipeline's answers over a question set, and compare runs."),
    "explain": ("explain", "Explain a pipeline, or why a session did what it did."),
    "schema": ("schema", "Print the pipeline JSON Schema (for editors)."),
    "serve": ("serve", "Serve pipelines over HTTP (native and OpenAI-compatible APIs)."),
    "playground": ("playground", "Try a pipeline in the browser and keep conversations as tests."),
    "keep": ("keep", "Keep a stored conversation as a runner test case."),
    "sessions": ("sessions", "Manage stored sessions (delete those unused for a while)."),
    "mcp": ("mcp", "List a pipeline's MCP servers' tools, or serve pipelines as MCP tools."),
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(name for name in COMMANDS if _module_exists(COMMANDS[name][0]))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS or not _module_exists(COMMANDS[cmd_name][0]):
            return None
        module = importlib.import_module(f"runner.cli.{COMMANDS[cmd_name][0]}")
        return module.command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # The help list comes from COMMANDS so that `runner --help` imports no command module.
        rows = [(name, COMMANDS[name][1]) for name in self.list_commands(ctx)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


def _module_exists(module: str) -> bool:
    from importlib.util import find_spec

    return find_spec(f"runner.cli.{module}") is not None


def _show_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    from runner.cli.extras import version_text

    click.echo(version_text())
    ctx.exit()


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_show_version,
    help="Show the version and which extras are installed, and exit.",
)
def main() -> None:
    """runner: declarative, validated, testable LLM tool pipelines.

    A pipeline is one YAML file per domain: tools, coordinators, prompt templates, corpora and
    a deep-search fallback. Start with `runner validate` and `runner run`.
    """
