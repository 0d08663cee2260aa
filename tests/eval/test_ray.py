"""`runner eval --ray`: on a local Ray cluster (started once for this module, stopped after),
the results equal a local run's, question for question; a batch whose worker dies is asked
again, and one that fails every time fails the run, naming its questions."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import Result

from runner.eval.evaluate import EvalOptions, evaluate
from runner.eval.metrics import stable
from runner.eval.setup import EvalSpec
from tests.eval.conftest import copy_hr, records

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
class Fused:
    """The hr pipeline with a python tool that kills its worker (tests/eval/plugins): once when
    `fuse` exists, every time at a question holding the text of `fatal`."""

    pipeline: Path
    fuse: Path
    fatal: Path

    def spec(self) -> EvalSpec:
        return EvalSpec(self.pipeline, allow_python=True)


@pytest.fixture(scope="module")
def fused(tmp_path_factory: pytest.TempPathFactory) -> Fused:
    folder = tmp_path_factory.mktemp("fused")
    pipeline = copy_hr(folder / "hr")
    (pipeline.parent / "plugins").mkdir()
    shutil.copy(PLUGIN, pipeline.parent / "plugins")
    fuse, fatal = folder / "fuse", folder / "fatal"
    tool = (
        "  - name: fuse\n    kind: python\n    class: eval_fuse:Fuse\n    path: plugins\n"
        f"    activation: always\n    settings: {{fuse: '{fuse}', fatal: '{fatal}'}}\n"
    )
    with pipeline.open("a", encoding="utf-8") as text:
        text.write("\n" + tool)
    return Fused(pipeline, fuse, fatal)


def test_a_batch_whose_worker_dies_is_asked_again_with_the_same_results(
    cluster: str, fused: Fused, tmp_path: Path
) -> None:
    questions = tmp_path / "questions.yaml"
    questions.write_text(QUESTIONS, encoding="utf-8")
    evaluate(fused.spec(), questions, EvalOptions(out=tmp_path / "local", progress=False))
    fused.fuse.touch()  # the first question asked on the cluster kills its worker
    try:
        evaluate(
            fused.spec(),
            questions,
            EvalOptions(out=tmp_path / "ray", ray=cluster, batch=2, progress=False),
        )
        assert not fused.fuse.exists(), "no worker died"
    finally:
        fused.fuse.unlink(missing_ok=True)
    assert [stable(r) for r in records(tmp_path / "ray")] == [
        stable(r) for r in records(tmp_path / "local")
    ]


def test_a_batch_that_fails_every_time_fails_the_run_naming_its_questions(
    cluster: str, fused: Fused, tmp_path: Path, cli: Callable[..., Result]
) -> None:
    questions = tmp_path / "questions.yaml"
    questions.write_text(QUESTIONS, encoding="utf-8")
    out = tmp_path / "ray"
    fused.fatal.write_text("per mile", encoding="utf-8")  # the mileage question, batch 2 of 3
    try:
        result = cli(
            "eval", fused.pipeline, questions, "--ray", cluster, "--batch", 2,
            "--allow-python", "--out", out, "--quiet",
        )  # fmt: skip
    finally:
        fused.fatal.unlink()
    assert result.exit_code == 1, result.output
    assert "error: 2 questions could not be asked on the Ray cluster" in result.stderr
    assert "(mileage, gifts: its worker died on every attempt)" in result.stderr
    assert f"results are in {out}" in result.stderr and "--resume" in result.stderr
    assert sorted(record["id"] for record in records(out)) == ["balance", "carry", "paternity"]
