"""One evaluation, from the question set to the results folder: read the set, ask what was not
asked yet (`--resume`), locally or on Ray, write the records and the summary, compare with the
baseline, and write the report.

    outcome = evaluate(EvalSpec(Path("pipelines/support/support.yaml")),
                       Path("pipelines/support/eval/questions.csv"), EvalOptions(jobs=4))
    outcome.summary["metrics"]["hit@k"]
"""

from __future__ import annotations

import platform
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from runner.eval.asking import Answered
from runner.eval.compare import Comparison, compare
from runner.eval.model import Question
from runner.eval.progress import Progress
from runner.eval.questions import load_questions
from runner.eval.ray_runner import BatchesFailed, run_on_ray
from runner.eval.results import REPORT, RunWriter, default_folder, read_run, utc_now
from runner.eval.setup import EvalSpec
from runner.eval.totals import summarize

if TYPE_CHECKING:
    from runner.llm.client import ProviderClient


@dataclass
class EvalOptions:
    out: Path | None = None
    jobs: int = 1
    ray: str | None = None  # a Ray address, "auto" or "local"
    batch: int = 16  # questions per Ray task
    resume: bool = False
    baseline: Path | None = None
    progress: bool = True
    report: bool = True
    traces: bool = True
    index_progress: Callable[[str, str, int, int], None] | None = None
    # an LLM client to ask with instead of the pipeline's (a benchmark's simulated model; local
    # runs only): the run owns it and closes it
    client: ProviderClient | None = None


class RunIncomplete(RuntimeError):
    """Questions could not be asked (a Ray batch that failed every time); the others' results
    are kept in the run's folder, for `--resume`."""


@dataclass
class EvalOutcome:
    folder: Path
    records: list[dict[str, Any]]
    summary: dict[str, Any]
    comparison: Comparison | None = None
    report: Path | None = None
    notes: list[str] = field(default_factory=list)  # said once on stderr (a missing extra)


def evaluate(spec: EvalSpec, questions_path: Path, options: EvalOptions) -> EvalOutcome:
    """Raises QuestionSetError (the set), ResultsError (the baseline), RunIncomplete (questions
    not asked) or what opening the pipeline raises."""
    question_set = load_questions(questions_path)
    baseline = read_run(options.baseline) if options.baseline is not None else None
    folder = options.out or default_folder(_state_folder(spec), questions_path)
    writer = RunWriter(folder, resume=options.resume, pipeline=Path(spec.pipeline))
    started = utc_now()
    todo = [q for q in question_set.questions if q.id not in writer.done]
    progress = Progress(
        len(question_set.questions),
        done=len(question_set.questions) - len(todo),
        enabled=options.progress,
    )

    def done(answered: Answered) -> None:
        record = answered.record
        if options.traces and answered.events:
            record["trace"] = writer.write_trace(str(record["id"]), answered.events)
        writer.add(record)
        progress.advance()

    try:
        timing = _ask(spec, todo, done, options)
    except BatchesFailed as failed:
        raise RunIncomplete(
            f"{failed}. The other questions' results are in {folder}: the same command with "
            "--resume asks only the missing ones"
        ) from failed
    finally:
        writer.close()
    progress.finish()
    order = [question.id for question in question_set.questions]
    records = writer.ordered(order)
    summary = {
        "pipeline": str(spec.pipeline),
        "questions": str(questions_path),
        "started": started,
        "finished": utc_now(),
        "options": {
            "jobs": options.jobs,
            "ray": options.ray,
            "judge": spec.judge,
            "llm": spec.llm,
            "resumed": options.resume,
            "baseline": str(baseline.folder) if baseline is not None else None,
        },
        "machine": {"python": platform.python_version(), "system": platform.system()},
        # this run's own: a resumed run asked `asked` questions
        "timing": {**timing, "asked": len(todo), "questions_per_s": _rate(len(todo), timing)},
        **summarize(records),
    }
    summary = writer.finish(summary)  # redacted: the report shows what the files hold
    outcome = EvalOutcome(folder, records, summary)
    if baseline is not None:
        outcome.comparison = compare(
            records,
            summary["metrics"],
            baseline.records,
            baseline.summary.get("metrics", {}),
            str(baseline.folder),
        )
    if options.report:
        _report(outcome)
    return outcome


def _state_folder(spec: EvalSpec) -> Path:
    from runner.config import load_pipeline

    return load_pipeline(spec.pipeline).state_folder


def _rate(asked: int, timing: dict[str, float]) -> float | None:
    seconds = timing.get("ask_s")
    return round(asked / seconds, 3) if seconds else None


def _ask(
    spec: EvalSpec, todo: list[Question], done: Callable[[Answered], None], options: EvalOptions
) -> dict[str, float]:
    """Ask the questions; how long opening and asking took."""
    if options.ray is not None:
        return run_on_ray(
            spec, todo, done, address=options.ray, jobs=options.jobs, batch=options.batch
        )
    from runner.eval.local import run_local

    return run_local(
        spec,
        todo,
        done,
        jobs=options.jobs,
        index_progress=options.index_progress,
        client=options.client,
    )


def _report(outcome: EvalOutcome) -> None:
    from runner.eval.report_html import PlotsUnavailable, write_report

    path = outcome.folder / REPORT
    try:
        write_report(path, outcome.summary, outcome.records, outcome.comparison)
    except PlotsUnavailable as missing:
        outcome.notes.append(str(missing))
        write_report(path, outcome.summary, outcome.records, outcome.comparison, plots=False)
    outcome.report = path
