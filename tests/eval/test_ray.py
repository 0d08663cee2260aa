"""`runner eval --ray`: on a local Ray cluster (started once for this module, stopped after),
the results equal a local run's, question for question."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from runner.eval.evaluate import EvalOptions, evaluate
from runner.eval.metrics import stable
from runner.eval.setup import EvalSpec
from tests.eval.conftest import records

ray = pytest.importorskip("ray")

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
