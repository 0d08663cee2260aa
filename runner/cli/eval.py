"""`runner eval PIPELINE QUESTIONS`: a pipeline's quality over a question set (docs/eval.md).

Exit 0: the run finished and passed its gates; 1: a gate failed (`--fail-under`,
`--fail-on-regression`) or the run could not be made (a broken question set, a pipeline that
cannot open), told in one readable paragraph; 2: a usage error.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from runner.cli import options
from runner.cli.run import friendly_errors

EXIT_FAILED = 1
FORMATS = ("text", "markdown", "json", "junit", "github")


@click.command("eval")
@click.argument("pipeline", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("questions", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--baseline",
    metavar="RUN|last",
    help="Compare with this earlier run (its results folder), or `last`: the newest finished "
    "run of the same question set. Names the questions that got better or worse, and why.",
)
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    help="Questions asked at once, in this process (the LLM's `concurrency` limit still holds).",
)
@click.option(
    "--ray",
    "ray_address",
    metavar="ADDRESS|auto|local",
    help="Ask the questions on a Ray cluster (pip install 'runner[ray]'): its address, `auto` "
    "for the cluster this machine belongs to, or `local` for one started here for the run.",
)
@click.option(
    "--batch",
    type=click.IntRange(min=1),
    default=16,
    show_default=True,
    help="With --ray: questions per Ray task.",
)
@click.option(
    "--out",
    type=click.Path(file_okay=False, path_type=Path),
    help="The results folder (default: .runner/eval/<set>-<UTC time>/ beside the pipeline).",
)
@click.option(
    "--resume",
    is_flag=True,
    help="Finish an interrupted run: ask only the questions its folder (--out, or else the "
    "newest unfinished run of this set) has no result for.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default="text",
    show_default=True,
    help="text for people, markdown for a pull request's comment, json for scripts, junit for "
    "CI test tabs, github for workflow annotations.",
)
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the formatted results to this file instead of stdout.",
)
@click.option(
    "--fail-under",
    "floors",
    metavar="METRIC=VALUE",
    multiple=True,
    help="Exit 1 when METRIC is under VALUE, e.g. hit@k=0.8 or sourced=75% (repeatable).",
)
@click.option(
    "--fail-on-regression",
    is_flag=True,
    help="Exit 1 when a question got worse than in the baseline.",
)
@click.option(
    "--judge",
    metavar="PROVIDER[:MODEL][@API_BASE]",
    help="Grade answers with this model: correctness against `reference`, faithfulness to the "
    "sources (any provider, e.g. ollama:qwen2.5 or openai_like:gpt-4o-mini@URL).",
)
@click.option(
    "--judge-script",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Grade with the scripted provider, from this file's rules (tests).",
)
@click.option(
    "--llm",
    metavar="PROVIDER[:MODEL][@API_BASE]",
    help="Override the pipeline's LLM, as `runner run --llm` does.",
)
@options.llm_script
@options.replay
@options.cache
@options.allow_python
@click.option("--no-build", is_flag=True, help="Fail instead of building a missing corpus index.")
@click.option("--no-traces", is_flag=True, help="Do not keep each question's trace.")
@click.option("--no-report", is_flag=True, help="Do not write report.html.")
@click.option("--quiet", "-q", is_flag=True, help="No progress line on stderr.")
@click.option("--debug", is_flag=True, help="Show tracebacks of errors.")
def command(pipeline: Path, questions: Path, **values: Any) -> None:
    """Ask PIPELINE every question of QUESTIONS (a CSV, JSONL or YAML file) and measure the
    answers: retrieval (hit@1, hit@k, MRR against the expected sources), the answer's sources
    and checks, groundedness, a judge's grades, LLM calls, tokens and latency, in total and by
    tag. Writes a results folder with report.html. See docs/eval.md.

    Exit 0: done and every gate passed; 1: a gate failed or the run could not be made.
    """
    from runner.eval.gates import GateError, parse_floor

    try:
        floors = [parse_floor(text) for text in values["floors"]]
    except GateError as error:
        raise click.BadParameter(str(error), param_hint="--fail-under") from None
    if (values["judge"] or "").split(":")[0].split("@")[0] == "offline":
        raise click.BadParameter(
            "the offline provider cannot grade answers: name a model, e.g. ollama:qwen2.5",
            param_hint="--judge",
        )
    if values["fail_on_regression"] and not values["baseline"]:
        raise click.UsageError("--fail-on-regression compares with a run: give --baseline RUN")
    from runner.eval.evaluate import RunIncomplete
    from runner.eval.questions import QuestionSetError
    from runner.eval.ray_runner import RayUnavailable
    from runner.eval.results import ResultsError

    with friendly_errors(values["debug"]):
        try:
            _evaluate(pipeline, questions, floors, values)
        except QuestionSetError as error:
            _show_diagnostics(error)
            sys.exit(EXIT_FAILED)
        except (ResultsError, RayUnavailable, RunIncomplete) as error:
            click.echo(f"error: {error}", err=True)
            sys.exit(EXIT_FAILED)


def _show_diagnostics(error: Any) -> None:
    from runner.config.formats import display_path
    from runner.documents.diagnostics import render

    for diagnostic in error.diagnostics:
        click.echo(render(diagnostic, display_file=display_path(diagnostic.file)), err=True)
    count = len(error.diagnostics)
    click.echo(
        f"{display_path(error.path)}: {count} problem{'s' if count != 1 else ''}; the question "
        "set's format is in docs/eval.md",
        err=True,
    )


def _evaluate(pipeline: Path, questions: Path, floors: list[Any], values: dict[str, Any]) -> None:
    from runner.eval.evaluate import EvalOptions, evaluate
    from runner.eval.formats import Printed, render
    from runner.eval.gates import failed_gates
    from runner.eval.setup import EvalSpec

    spec = EvalSpec(
        pipeline=pipeline,
        llm=values["llm"],
        llm_script=values["llm_script"],
        replay=values["replay"],
        cache=values["cache"],
        allow_python=values["allow_python"],
        build=not values["no_build"],
        judge=values["judge"],
        judge_script=values["judge_script"],
    )
    out = values["out"]
    if values["resume"] and out is None:
        out = _unfinished_run(pipeline, questions)
    options = EvalOptions(
        out=out,
        jobs=values["jobs"],
        ray=values["ray_address"],
        batch=values["batch"],
        resume=values["resume"],
        baseline=_baseline(pipeline, questions, values["baseline"]),
        progress=not values["quiet"],
        report=not values["no_report"],
        traces=not values["no_traces"],
        index_progress=_indexing,
    )
    outcome = evaluate(spec, questions, options)
    gates = failed_gates(
        outcome.summary["metrics"],
        floors,
        outcome.comparison,
        fail_on_regression=values["fail_on_regression"],
    )
    printed = Printed(
        outcome.summary,
        outcome.records,
        outcome.comparison,
        gates,
        str(questions),
        str(outcome.folder),
    )
    text = render(printed, values["fmt"])
    if values["output"] is not None:
        values["output"].write_text(text + "\n", encoding="utf-8")
    else:
        click.echo(text)
    for note in outcome.notes:
        click.echo(f"note: {note}", err=True)
    if outcome.report is not None:
        click.echo(f"report: {outcome.report}", err=True)
    sys.exit(EXIT_FAILED if gates else 0)


def _state(pipeline: Path) -> Path:
    from runner.config import load_pipeline

    return load_pipeline(pipeline).state_folder / "eval"


def _baseline(pipeline: Path, questions: Path, given: str | None) -> Path | None:
    if given is None:
        return None
    if given != "last":
        return Path(given)
    from runner.eval.results import latest_run

    found = latest_run(_state(pipeline), questions)
    if found is None:
        raise click.UsageError(
            f"--baseline last: no finished run of {questions.name} under {_state(pipeline)}; "
            "run `runner eval` once without --baseline first"
        )
    return found


def _unfinished_run(pipeline: Path, questions: Path) -> Path:
    from runner.eval.results import unfinished_run

    found = unfinished_run(_state(pipeline), questions)
    if found is None:
        raise click.UsageError(
            f"--resume: no unfinished run of {questions.name} under {_state(pipeline)}; "
            "name its folder with --out"
        )
    return found


def _indexing(corpus: str, stage: str, done: int, total: int) -> None:
    if stage == "read" and done == 0:
        click.echo(f"building the index of corpus {corpus!r} ({total} files)…", err=True)
