"""`make demo`: the support example on the embedded offline provider, in four commands.

At runner's top as an entry point (`python -m runner.demo`).

    python -m runner.demo [--pipeline pipelines/support/support.yaml]

1. `runner index` builds the handbook's index, its words and its page vectors (the handbook is
   searched by meaning too, `mode: hybrid`, on the standard install), with a progress bar;
2. a comparison the coordinator decomposes into forced product lookups;
3. a warranty question that asks for the model number, then its answer in the same session;
4. a two-part question the gatekeeper checks the first pages against (deep search where they
   fall short).

Each step prints the command a user would type and its output: the answer, its sources and the
task tree. The commands run in this process (llama-index is imported once), and a step whose
outcome is not the expected one makes the demo fail, so that `make demo` is a check too.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import click

DEFAULT_PIPELINE = Path("pipelines/support/support.yaml")

# `runner run`'s exit status per outcome
EXPECTED_EXIT = {"answer": 0, "clarification": 3}


@dataclass(frozen=True)
class Step:
    title: str
    message: str
    outcome: str  # answer | clarification
    continues: bool = False  # answers the previous step's question in the same session


STEPS = (
    Step(
        "A comparison: the coordinator makes one forced product lookup per model (C13), "
        "skips the handbook searches the table made unnecessary (C16), then compares (C20e)",
        "Compare the KD-450 and the KD-600X dishwashers",
        "answer",
    ),
    Step(
        "A warranty question without a model number: the tool asks (C24)",
        "What warranty do I get on my washing machine?",
        "clarification",
    ),
    Step(
        "The answer, in the same session: only the tool that asked runs again",
        "It is a KW-720X",
        "answer",
        continues=True,
    ),
    Step(
        "A two-part question: the gatekeeper reads whether the first pages answer both parts; "
        "where they do not, deep search looks further (neighbouring pages first, C27-C32)",
        "How many years are oven spare parts stocked, and what is the no-fault-found fee?",
        "answer",
    ),
)


def run_steps(pipeline: Path, steps: Sequence[Step] = STEPS) -> list[str]:
    """Index the pipeline's corpora, then run the steps; the problems found (empty: all went
    as expected)."""
    problems: list[str] = []
    exit_code = _command(["index", str(pipeline)])
    if exit_code != 0:
        return [f"`runner index {pipeline}` failed (exit {exit_code})"]
    session = f"demo-{int(time.time())}"
    for number, step in enumerate(steps, 1):
        click.secho(f"\n{number}. {step.title}", bold=True)
        args = ["run", str(pipeline), step.message, "--llm", "offline"]
        if step.continues or _continued(steps, number):
            args += ["--session", session]
        exit_code = _command(args)
        if exit_code != EXPECTED_EXIT[step.outcome]:
            problems.append(
                f"step {number} ({step.message!r}) should end with {step.outcome} "
                f"(exit {EXPECTED_EXIT[step.outcome]}), but exited {exit_code}"
            )
    return problems


def _continued(steps: Sequence[Step], number: int) -> bool:
    """A step whose next step answers its question runs in the demo's named session."""
    return number < len(steps) and steps[number].continues


def _command(args: list[str]) -> int:
    """Run one `runner` command in this process, as the user would type it; its exit status."""
    from runner.cli import main

    shown = " ".join(f'"{arg}"' if " " in arg else arg for arg in args)
    click.secho(f"$ runner {shown}", fg="cyan")
    try:
        main.main(args, prog_name="runner", standalone_mode=False)
    except SystemExit as exit:
        return exit.code if isinstance(exit.code, int) else 1
    except click.ClickException as error:
        error.show()
        return error.exit_code
    return 0


@click.command()
@click.option(
    "--pipeline",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=DEFAULT_PIPELINE,
    show_default=True,
    help="The support example (run from the repository's root).",
)
def demo(pipeline: Path) -> None:
    """Index the support example and run three questions on the offline provider."""
    problems = run_steps(pipeline)
    if problems:
        for problem in problems:
            click.secho(f"demo: {problem}", fg="red", err=True)
        sys.exit(1)
    click.secho(
        "\nThe demo ran on the offline provider: no model, no network. Next: read "
        "docs/tutorial.md, or try `runner chat pipelines/support/support.yaml`.",
        bold=True,
    )


if __name__ == "__main__":
    demo()
