"""docs/cli.md names every command `runner --help` lists and every option of each command's
`--help`: the page is where an author looks an option up."""

from __future__ import annotations

import click
import pytest

from runner.cli import main

from .conftest import ROOT

CLI_MD = ROOT / "docs" / "cli.md"
# `runner index`'s options are documented with the lookup-table indexes that are landing with
# them; until then they may be missing here.
PENDING = {("index", "--corpus"), ("index", "--force")}


def commands() -> dict[str, click.Command]:
    """Every command, as `runner --help` lists them (the group loads them lazily)."""
    assert isinstance(main, click.Group)
    context = click.Context(main)
    found = {name: main.get_command(context, name) for name in main.list_commands(context)}
    assert found, "runner lists no commands"
    return {name: command for name, command in found.items() if command is not None}


def options(command: click.Command) -> list[str]:
    names = []
    for param in command.params:
        if isinstance(param, click.Option) and param.name != "help":
            names.append(next(o for o in param.opts if o.startswith("--")))
    return names


@pytest.mark.parametrize("name", sorted(commands()))
def test_cli_md_names_the_command(name: str) -> None:
    assert f"`runner {name}" in CLI_MD.read_text(encoding="utf-8")


@pytest.mark.parametrize("name", sorted(commands()))
def test_cli_md_names_every_option_of_the_command(name: str) -> None:
    text = CLI_MD.read_text(encoding="utf-8")
    missing = [
        option
        for option in options(commands()[name])
        if option not in text and (name, option) not in PENDING
    ]
    assert missing == []
