"""Options several commands take, written once so that they read and behave alike."""

from __future__ import annotations

import click

allow_python = click.option(
    "--allow-python",
    is_flag=True,
    envvar="RUNNER_ALLOW_PYTHON",
    help="Allow `python` tools to import and run their code (also RUNNER_ALLOW_PYTHON=1).",
)
