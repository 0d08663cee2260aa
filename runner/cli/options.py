"""Options several commands take, written once so that they read and behave alike."""

from __future__ import annotations

from pathlib import Path

import click

allow_python = click.option(
    "--allow-python",
    is_flag=True,
    envvar="RUNNER_ALLOW_PYTHON",
    help="Allow `python` tools to import and run their code (also RUNNER_ALLOW_PYTHON=1).",
)

llm_script = click.option(
    "--llm-script",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Answer with the scripted provider, from this file's rules.",
)

replay = click.option(
    "--replay",
    metavar="CASSETTE",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Answer from this cassette (the replay provider) instead of an LLM.",
)

cache = click.option(
    "--cache/--no-cache",
    default=None,
    help="Use the on-disk LLM response cache (default: the pipeline's llm.cache).",
)
