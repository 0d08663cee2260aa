"""`runner eval --ray`: on a local Ray cluster (started once for this module, stopped after),
the results equal a local run's, question for question; a batch whose worker dies, or that
raises while its worker lives on, is asked again, and one that fails every time fails the run,
naming its questions and why, for `--resume` to ask them again."""

from __future__ import annotations

import contextlib
import json
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import Result

from runner.eval.evaluate import EvalOptions, evaluate
from runner.eval.metrics import stable
from runner.eval.setup import EvalSpec
from tests.eval.conftest import copy_hr, records, write

ray = pytest.importorskip("ray")

PLUGIN = Path(__file__).parent / "plugins" / "eval_fuse.py"

QUESTIONS = """\
- {id: carry, question: can I take my unused holiday days into next year,
   sources: annual-leave-policy.md#Carrying leave over, tags: [leave]}
- {id: balance, question: How many days of annual leave do I have left?, answer: days,
   follow_up: MF-1008, tags: [leave]}
- {id: mileage, question: what do I get per mile if I drive my own car,
   sources: expenses-and-travel-policy.md#Using your own car}
- {id: gifts, question: a supplier sent me a bottle of wine can I keep it,
   sources: "code-of-conduct.md#Gifts, hospitality and bribery"}
- {id: paternity, question: how much time off does a new dad get,
   sources: parental-leave-policy.md}
"""


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """A Ray cluster on this machine, two CPUs, for this module's tests."""
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()


def test_a_ray_run_gives_the_same_results_as_a_local_run(
    cluster: str, hr_module: Path, tmp_path: Path
) -> None:
    questions = tmp_path / "questions.yaml"
    questions.write_text(QUESTIONS, encoding="utf-8")
    spec = EvalSpec(hr_module)
    local = evaluate(spec, questions, EvalOptions(out=tmp_path / "local", progress=False))
    on_ray = evaluate(
        spec,
        questions,
        EvalOptions(out=tmp_path / "ray", ray=cluster, batch=2, progress=False),
    )
    assert [stable(r) for r in records(tmp_path / "ray")] == [
        stable(r) for r in records(tmp_path / "local")
    ]
    assert on_ray.summary["metrics"]["hit@k"] == local.summary["metrics"]["hit@k"]
    assert on_ray.summary["by_tag"] == {
        tag: {**values, **_timings(on_ray.summary["by_tag"][tag])}
        for tag, values in local.summary["by_tag"].items()
    }
    assert (tmp_path / "ray" / "traces" / "balance.jsonl").is_file()


def _timings(values: dict) -> dict:
    return {key: value for key, value in values.items() if key.startswith("latency_")}


@dataclass(frozen=True)
class Tripwire:
    """The files that set off one of the tools in tests/eval/plugins/eval_fuse.py: once when
    `once` exists, every time at a question holding the text of `always`."""

    once: Path
    always: Path


@dataclass(frozen=True)
class Fused:
    """The hr pipeline with two python tools that break their worker: `fuse` kills it, `snag`
    raises an exception out of the batch and leaves it alive."""

    pipeline: Path
    fuse: Tripwire
    snag: Tripwire

    def spec(self) -> EvalSpec:
        return EvalSpec(self.pipeline, allow_python=True)


@pytest.fixture(scope="module")
def fused(tmp_path_factory: pytest.TempPathFactory) -> Fused:
    folder = tmp_path_factory.mktemp("fused")
    pipeline = copy_hr(folder / "hr")
    (pipeline.parent / "plugins").mkdir()
    shutil.copy(PLUGIN, pipeline.parent / "plugins")
    wires = {
        name: Tripwire(folder / f"{name}-once", folder / f"{name}-always")
        for name in ("fuse", "snag")
    }
    with pipeline.open("a", encoding="utf-8") as text:
        for name, wire in wires.items():
            text.write(
                f"\n  - name: {name}\n    kind: python\n    class: eval_fuse:{name.title()}\n"
                "    path: plugins\n    activation: always\n"
                f"    settings: {{once: '{wire.once}', always: '{wire.always}'}}\n"
            )
    return Fused(pipeline, **wires)


@pytest.fixture(scope="module")
def local_records(fused: Fused, tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """The fused pipeline's records, asked in this process with no tripwire set."""
    folder = tmp_path_factory.mktemp("local")
    questions = write(folder / "questions.yaml", QUESTIONS)
    evaluate(fused.spec(), questions, EvalOptions(out=folder / "run", progress=False))
    return [stable(r) for r in records(folder / "run")]


@contextlib.contextmanager
def armed(trigger: Path, text: str = "") -> Iterator[None]:
    trigger.write_text(text, encoding="utf-8")
    try:
        yield
    finally:
        trigger.unlink(missing_ok=True)


def test_a_batch_whose_worker_dies_is_asked_again_with_the_same_results(
    cluster: str, fused: Fused, local_records: list[dict], tmp_path: Path
) -> None:
    questions = write(tmp_path / "questions.yaml", QUESTIONS)
    with armed(fused.fuse.once):  # the first question asked on the cluster kills its worker
        evaluate(
            fused.spec(),
            questions,
            EvalOptions(out=tmp_path / "ray", ray=cluster, batch=2, progress=False),
        )
        assert not fused.fuse.once.exists(), "no worker died"
    assert [stable(r) for r in records(tmp_path / "ray")] == local_records


def test_a_batch_that_fails_every_time_fails_the_run_naming_its_questions(
    cluster: str, fused: Fused, tmp_path: Path, cli: Callable[..., Result]
) -> None:
    questions = write(tmp_path / "questions.yaml", QUESTIONS)
    out = tmp_path / "ray"
    with armed(fused.fuse.always, "per mile"):  # the mileage question, batch 2 of 3
        result = cli(
            "eval", fused.pipeline, questions, "--ray", cluster, "--batch", 2,
            "--allow-python", "--out", out, "--quiet",
        )  # fmt: skip
    assert result.exit_code == 1, result.output
    assert "error: 2 questions could not be asked on the Ray cluster" in result.stderr
    assert "(mileage, gifts: its worker died on every attempt)" in result.stderr
    assert f"results are in {out}" in result.stderr and "--resume" in result.stderr
    assert sorted(record["id"] for record in records(out)) == ["balance", "carry", "paternity"]


def test_a_batch_that_raises_once_is_asked_again_on_its_live_worker_with_the_same_results(
    cluster: str, fused: Fused, local_records: list[dict], tmp_path: Path
) -> None:
    questions = write(tmp_path / "questions.yaml", QUESTIONS)
    with armed(fused.snag.once):  # the first question asked on the cluster raises
        evaluate(
            fused.spec(),
            questions,
            EvalOptions(out=tmp_path / "ray", ray=cluster, batch=2, progress=False),
        )
        assert not fused.snag.once.exists(), "no batch raised"
    assert [stable(r) for r in records(tmp_path / "ray")] == local_records


def test_a_batch_that_raises_every_time_is_set_aside_with_its_error_and_resume_asks_it_again(
    cluster: str,
    fused: Fused,
    local_records: list[dict],
    tmp_path: Path,
    cli: Callable[..., Result],
) -> None:
    questions = write(tmp_path / "questions.yaml", QUESTIONS)
    out = tmp_path / "ray"
    ask = (
        "eval",
        fused.pipeline,
        questions,
        "--ray",
        cluster,
        "--batch",
        2,
        "--allow-python",
        "--out",
        out,
        "--quiet",
    )
    with armed(fused.snag.always, "per mile"):  # the mileage question, batch 2 of 3
        failed = cli(*ask)
    assert failed.exit_code == 1, failed.output
    assert "error: 2 questions could not be asked on the Ray cluster" in failed.stderr
    assert (
        "(mileage, gifts: GaveUp: the snag tool gave up at 'what do I get per mile" in failed.stderr
    )
    assert sorted(record["id"] for record in records(out)) == ["balance", "carry", "paternity"]
    resumed = cli(*ask, "--resume")
    assert resumed.exit_code == 0, resumed.output
    assert json.loads((out / "summary.json").read_text(encoding="utf-8"))["timing"]["asked"] == 2
    assert [stable(r) for r in records(out)] == local_records
