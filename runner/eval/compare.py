"""A run compared with a baseline run: each metric before and after, and the questions that got
better or worse, each with its reasons (a source lost, an answer check failed, a round
degraded, the gold page ranked lower…).

A question is *worse* when anything of it got worse (even if something else got better: a
regression is never hidden by a gain), *better* when something got better and nothing worse.
`--fail-on-regression` fails on any worse question.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from runner.eval.totals import LOWER_IS_BETTER, METRICS

Record = Mapping[str, Any]
GRADE_STEP = 0.25  # a judge's score must move this much to count as a change
GROUNDED_STEP = 0.2  # groundedness and relevance likewise


@dataclass(frozen=True)
class Reason:
    text: str
    better: bool


@dataclass
class QuestionChange:
    id: str
    question: str
    line: int
    reasons: list[Reason]

    @property
    def worse(self) -> bool:
        return any(not reason.better for reason in self.reasons)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "question": self.question,
            "line": self.line,
            "worse": [r.text for r in self.reasons if not r.better],
            "better": [r.text for r in self.reasons if r.better],
        }


@dataclass
class Comparison:
    baseline: str  # the baseline run's folder
    metrics: dict[str, dict[str, Any]] = field(default_factory=dict)  # name -> before/after/delta
    worse: list[QuestionChange] = field(default_factory=list)
    better: list[QuestionChange] = field(default_factory=list)
    new: list[str] = field(default_factory=list)  # ids only in this run
    gone: list[str] = field(default_factory=list)  # ids only in the baseline

    @property
    def regressed(self) -> bool:
        return bool(self.worse)

    def to_json(self) -> dict[str, Any]:
        return {
            "baseline": self.baseline,
            "metrics": self.metrics,
            "worse": [change.to_json() for change in self.worse],
            "better": [change.to_json() for change in self.better],
            "new": self.new,
            "gone": self.gone,
        }


def compare(
    records: Sequence[Record],
    metrics: Mapping[str, Any],
    baseline_records: Sequence[Record],
    baseline_metrics: Mapping[str, Any],
    baseline: str,
) -> Comparison:
    comparison = Comparison(baseline, metric_changes(metrics, baseline_metrics))
    before = {str(record["id"]): record for record in baseline_records}
    seen = set()
    for record in records:
        key = str(record["id"])
        seen.add(key)
        if key not in before:
            comparison.new.append(key)
            continue
        reasons = question_changes(before[key], record)
        if not reasons:
            continue
        change = QuestionChange(
            key, str(record.get("question", "")), int(record.get("line") or 0), reasons
        )
        (comparison.worse if change.worse else comparison.better).append(change)
    comparison.gone = [key for key in before if key not in seen]
    return comparison


def metric_changes(now: Mapping[str, Any], then: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    changes = {}
    for name in METRICS:
        after, before = now.get(name), then.get(name)
        delta = None if after is None or before is None else round(after - before, 4)
        direction = None
        if delta:
            direction = "better" if (delta > 0) != (name in LOWER_IS_BETTER) else "worse"
        changes[name] = {"before": before, "after": after, "delta": delta, "direction": direction}
    return changes


def question_changes(before: Record, after: Record) -> list[Reason]:
    """What changed for one question, each change with its direction."""
    reasons: list[Reason] = []
    reasons += _outcome(before, after)
    reasons += _degraded(before, after)
    reasons += _retrieval(before, after)
    reasons += _sources(before, after)
    reasons += _checks(before, after)
    reasons += _scored(before, after)
    return reasons


def _outcome(before: Record, after: Record) -> list[Reason]:
    was, now = before.get("outcome"), after.get("outcome")
    if was == now:
        return []
    rank: dict[str | None, int] = {"error": 0, "clarification": 1, "answer": 2}
    detail = f" ({after['error']})" if now == "error" and after.get("error") else ""
    return [Reason(f"outcome {was} → {now}{detail}", rank.get(now, 0) > rank.get(was, 0))]


def _degraded(before: Record, after: Record) -> list[Reason]:
    was, now = bool(before.get("degraded")), bool(after.get("degraded"))
    if was == now:
        return []
    if now:
        why = "; ".join(after.get("warnings") or ()) or "a part of the round failed"
        return [Reason(f"the round degraded: {why}", False)]
    return [Reason("the round no longer degrades", True)]


def _retrieval(before: Record, after: Record) -> list[Reason]:
    was, now = before.get("rank"), after.get("rank")
    if was == now or not after.get("gold"):
        return []
    if now is None:
        return [Reason(f"the gold source is no longer retrieved (it was rank {was})", False)]
    if was is None:
        return [Reason(f"the gold source is now retrieved, at rank {now}", True)]
    return [Reason(f"the gold source's rank went from {was} to {now}", now < was)]


def _sources(before: Record, after: Record) -> list[Reason]:
    was, now = before.get("sourced"), after.get("sourced")
    if was is None or now is None or was == now:
        return []
    gold = ", ".join(after.get("gold") or ())
    if now:
        return [Reason(f"a source gained: the answer now cites {gold}", True)]
    return [Reason(f"a source lost: the answer no longer cites {gold}", False)]


def _checks(before: Record, after: Record) -> list[Reason]:
    passed_before = {check["text"]: check["passed"] for check in before.get("checks") or ()}
    reasons = []
    for check in after.get("checks") or ():
        was = passed_before.get(check["text"])
        if was is None or was == check["passed"]:
            continue
        if check["passed"]:
            reasons.append(Reason(f"the answer check {check['text']!r} now passes", True))
        else:
            reasons.append(Reason(f"an answer check failed: {check['text']!r} is missing", False))
    return reasons


def _scored(before: Record, after: Record) -> list[Reason]:
    reasons = []
    pairs = [
        (name, before.get(name), after.get(name), GROUNDED_STEP)
        for name in ("groundedness", "relevance")
    ]
    for name in ("correctness", "faithfulness", "relevance"):
        was = ((before.get("judge") or {}).get(name) or {}).get("score")
        now_grade = (after.get("judge") or {}).get(name) or {}
        pairs.append((f"judged {name}", was, now_grade.get("score"), GRADE_STEP))
    for name, was, now, step in pairs:
        if was is None or now is None or abs(now - was) < step:
            continue
        why = ""
        if name.startswith("judged "):
            graded = name.removeprefix("judged ")
            reason = ((after.get("judge") or {}).get(graded) or {}).get("reason", "")
            why = f": {reason}"
            name = graded if graded != "relevance" else name
        reasons.append(Reason(f"{name} {was:.2f} → {now:.2f}{why}", now > was))
    return reasons
