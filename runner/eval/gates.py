"""CI's gates on a run: `--fail-under METRIC=VALUE` (a metric at least VALUE; `0.8` or `80%`)
and `--fail-on-regression` (no question worse than in the baseline)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from runner.config.suggest import suggestion_suffix
from runner.eval.compare import Comparison
from runner.eval.totals import LOWER_IS_BETTER, METRICS

GATED = tuple(name for name in METRICS if name not in LOWER_IS_BETTER)


class GateError(ValueError):
    """A `--fail-under` that cannot be read."""


@dataclass(frozen=True)
class Floor:
    metric: str
    value: float

    def __str__(self) -> str:
        return f"{self.metric}={self.value:g}"


def parse_floor(text: str) -> Floor:
    name, equals, value = text.partition("=")
    name = name.strip()
    if not equals:
        raise GateError(f"--fail-under {text!r}: write METRIC=VALUE, e.g. hit@k=0.8")
    if name not in GATED:
        raise GateError(
            f"--fail-under: unknown metric `{name}`{suggestion_suffix(name, GATED)}; "
            f"the metrics: {', '.join(GATED)}"
        )
    value = value.strip()
    try:
        number = float(value[:-1]) / 100 if value.endswith("%") else float(value)
    except ValueError:
        raise GateError(f"--fail-under {text!r}: {value!r} is not a number (0.8 or 80%)") from None
    return Floor(name, number)


def failed_gates(
    metrics: Mapping[str, Any],
    floors: Sequence[Floor],
    comparison: Comparison | None,
    *,
    fail_on_regression: bool,
) -> list[str]:
    """Why the run fails CI, one line each; empty when it passes."""
    failures = []
    for floor in floors:
        value = metrics.get(floor.metric)
        if value is None:
            failures.append(f"{floor.metric} was not measured (no question it applies to)")
        elif value < floor.value:
            failures.append(f"{floor.metric} is {value:.4g}, under {floor.value:g}")
    if fail_on_regression and comparison is not None and comparison.regressed:
        count = len(comparison.worse)
        failures.append(
            f"{count} question{'s' if count != 1 else ''} got worse than in the baseline"
        )
    return failures
