"""`runner playground PIPELINE`: the playground on this machine, opened in the browser.

The same app as `runner serve PIPELINE --playground`, bound to 127.0.0.1. With bearer tokens
(RUNNER_SERVE_TOKENS or --token-file) its pages ask for one; without them its sessions go to a
store of its own (`.runner/playground.sqlite` beside each pipeline), never the service's, unless
--state names one.
"""

from __future__ import annotations

import sys
import threading
import webbrowser
from pathlib import Path

import click

from runner.cli import options


@click.command("playground")
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("--port", type=int, default=8000, show_default=True, help="0: any free port.")
@click.option(
    "--llm",
    "llm_override",
    metavar="PROVIDER[:MODEL][@API_BASE]",
    help="Override the pipelines' LLM, as in `runner run`: offline, scripted, replay, "
    "openai_like, ollama, llama_index.",
)
@click.option(
    "--state",
    metavar="FILE|URL",
    help="The session store (default: with tokens as `runner serve`; without, "
    ".runner/playground.sqlite beside each pipeline).",
)
@click.option(
    "--token-file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Bearer tokens, one a line (also RUNNER_SERVE_TOKENS): the pages ask for one.",
)
@options.allow_python
@click.option("--open/--no-open", "open_browser", default=True, help="Open the browser.")
def command(
    paths: tuple[str, ...],
    port: int,
    llm_override: str | None,
    state: str | None,
    token_file: Path | None,
    allow_python: bool,
    open_browser: bool,
) -> None:
    """Try a pipeline in the browser: chat with it, see why each tool ran, keep the
    conversation as a test.

    PATHS are pipeline files or folders. Serves on http://127.0.0.1:PORT/playground/ until
    Ctrl+C.
    """
    from runner.cli.webapp import ServeError, serve_locally
    from runner.serve.http import load_tokens

    def started(url: str) -> None:
        click.echo(f"the playground is at {url} (Ctrl+C stops it)")
        if open_browser:
            threading.Thread(target=webbrowser.open, args=(url,), daemon=True).start()

    try:
        serve_locally(
            list(paths),
            port=port,
            started=started,
            state=state,
            llm_override=llm_override,
            allow_python=allow_python,
            tokens=load_tokens(token_file),
        )
    except ServeError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)
