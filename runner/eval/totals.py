"""A run's metrics in total and by tag, from its questions' records (runner.eval.metrics).

Every share is over the questions the metric applies to (`hit@1` over those with `sources`,
`checks` over those with `answer` texts, …), and is null when none does; docs/eval.md gives
each definition. These are the names `--fail-under METRIC=VALUE` takes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from runner.eval.metrics import COUNTS

Record = Mapping[str, Any]

# metric -> (what it is over, how one record scores); a record the metric does not apply to
# scores None and is left out
_SHARES: dict[str, Callable[[Record], float | bool | None]] = {
    "answered": lambda r: r.get("outcome") == "answer",
    "clarified": lambda r: r.get("outcome") == "clarification",
    "errors": lambda r: r.get("outcome") == "error",
    "degraded": lambda r: bool(r.get("degraded")),
    "hit@1": lambda r: r.get("hit@1"),
    "hit@k": lambda r: r.get("hit@k"),
    "mrr": lambda r: r.get("rr"),
    "sourced": lambda r: r.get("sourced"),
    "checks": lambda r: r.get("checks_passed"),
    "groundedness": lambda r: r.get("groundedness"),
    "relevance": lambda r: r.get("relevance"),
    "correctness": lambda r: _grade(r, "correctness"),
    "faithfulness": lambda r: _grade(r, "faithfulness"),
    "judged_relevance": lambda r: _grade(r, "relevance"),
}
# higher is better for every metric but these
LOWER_IS_BETTER = frozenset(
    {"errors", "degraded", "llm_calls", "tokens", "latency_p50_ms", "latency_p95_ms"}
)
METRICS = (*_SHARES, "llm_calls", "tokens", "latency_p50_ms", "latency_p95_ms")


def _grade(record: Record, name: str) -> float | None:
    grade = (record.get("judge") or {}).get(name)
    if isinstance(grade, Mapping) and grade.get("score") is not None:
        return float(grade["score"])
    return None  # not graded, or the grade's call failed


def mean(values: Iterable[float | bool | None]) -> float | None:
    kept = [float(value) for value in values if value is not None]
    return round(sum(kept) / len(kept), 4) if kept else None


def percentile(values: Sequence[float], share: float) -> float | None:
    """The nearest-rank percentile (`share` from 0 to 1)."""
    if not values:
        return None
    ordered = sorted(values)
    index = max(0, min(len(ordered) - 1, int(-(-share * len(ordered) // 1)) - 1))
    return round(ordered[index], 3)


def metrics(records: Sequence[Record]) -> dict[str, Any]:
    """Every metric of these records."""
    totals: dict[str, Any] = {"questions": len(records)}
    for name, score in _SHARES.items():
        totals[name] = mean(score(record) for record in records)
    latencies = [float(r.get("latency_ms") or 0.0) for r in records]
    totals["llm_calls"] = mean((r.get("llm") or {}).get("calls", 0) for r in records)
    totals["tokens"] = mean((r.get("llm") or {}).get("tokens", 0) for r in records)
    totals["latency_p50_ms"] = percentile(latencies, 0.5)
    totals["latency_p95_ms"] = percentile(latencies, 0.95)
    return totals


def by_purpose(records: Iterable[Record]) -> dict[str, dict[str, float]]:
    """LLM calls, tokens and milliseconds of every question summed, by purpose."""
    summed: dict[str, dict[str, float]] = {}
    for record in records:
        for purpose, usage in ((record.get("llm") or {}).get("by_purpose") or {}).items():
            total = summed.setdefault(purpose, dict.fromkeys(COUNTS, 0))
            for key in COUNTS:
                total[key] += usage.get(key, 0)
    for usage in summed.values():
        usage["ms"] = round(usage["ms"], 3)
    return dict(sorted(summed.items()))


def by_tag(records: Iterable[Record]) -> dict[str, dict[str, Any]]:
    """The metrics of each tag's questions (a question with several tags counts in each)."""
    grouped: dict[str, list[Record]] = {}
    for record in records:
        for tag in record.get("tags") or ():
            grouped.setdefault(tag, []).append(record)
    return {tag: metrics(grouped[tag]) for tag in sorted(grouped)}


def summarize(records: Sequence[Record]) -> dict[str, Any]:
    return {
        "metrics": metrics(records),
        "by_tag": by_tag(records),
        "by_purpose": by_purpose(records),
    }
