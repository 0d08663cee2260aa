"""A question's metrics, from the rounds its conversation ran (docs/eval.md defines each).

- retrieval: the gold source's `rank` among each retrieval's pages (1 = first), and the best of
  them over the round's retrievals; `hit@1` (best rank 1), `hit@k` (a gold page among the
  pages any retrieval returned), `rr` (1 / best rank, 0 when none) — only for a question with
  `sources`;
- answer: `sourced` (a gold source among the answer's sources), `checks` (each `answer` text
  in the answer, case aside) and `checks_passed` (all of them);
- groundedness (runner.eval.groundedness), relevance (runner.eval.relevance), the judge's grades
  (runner.eval.judge);
- the outcome, `degraded`, and the LLM calls, tokens and milliseconds by purpose of every round.

A record is one line of the results file (runner.eval.results); what is not measured for a
question (no gold, no check, no judge) is null, and totals leave it out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from runner.eval.model import Gold, Question

COUNTS = ("calls", "prompt_tokens", "completion_tokens", "ms")


def gold_rank(golds: Sequence[Gold], pages: Iterable[Mapping[str, Any]]) -> int | None:
    """The rank of the first page that is one of the gold sources, or None."""
    for page in pages:
        if any(gold.matches(page) for gold in golds):
            return int(page["rank"])
    return None


def retrieval_metrics(question: Question, retrievals: Sequence[Mapping[str, Any]]) -> dict:
    if not question.sources:
        return {"rank": None, "hit@1": None, "hit@k": None, "rr": None, "retrievals": []}
    per_retrieval = [
        {
            "tool": record.get("tool"),
            "query": record.get("query"),
            "rank": gold_rank(question.sources, record.get("pages") or ()),
            "pages": len(record.get("pages") or ()),
        }
        for record in retrievals
    ]
    ranks = [entry["rank"] for entry in per_retrieval if entry["rank"] is not None]
    best = min(ranks) if ranks else None
    return {
        "rank": best,
        "hit@1": best == 1,
        "hit@k": best is not None,
        "rr": round(1 / best, 6) if best else 0.0,
        "retrievals": per_retrieval,
    }


def answer_metrics(question: Question, final: Mapping[str, Any]) -> dict[str, Any]:
    answer = str(final.get("answer") or "") if final.get("outcome") == "answer" else ""
    sources = final.get("sources") or []
    sourced = None
    if question.sources:
        sourced = any(gold.matches(source) for gold in question.sources for source in sources)
    folded = answer.casefold()
    checks = [{"text": text, "passed": text.casefold() in folded} for text in question.answer]
    return {
        "sourced": sourced,
        "checks": checks,
        "checks_passed": all(check["passed"] for check in checks) if checks else None,
    }


def llm_usage(rounds: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Every round's LLM calls summed: calls, tokens, and by purpose."""
    by_purpose: dict[str, dict[str, float]] = {}
    for data in rounds:
        for purpose, usage in ((data.get("stats") or {}).get("by_purpose") or {}).items():
            total = by_purpose.setdefault(purpose, dict.fromkeys(COUNTS, 0))
            for key in COUNTS:
                total[key] += usage.get(key, 0)
    for usage in by_purpose.values():
        usage["ms"] = round(usage["ms"], 3)
    return {
        "calls": sum(int(u["calls"]) for u in by_purpose.values()),
        "tokens": sum(
            int(u["prompt_tokens"] + u["completion_tokens"]) for u in by_purpose.values()
        ),
        "by_purpose": by_purpose,
    }


def question_record(
    question: Question,
    rounds: Sequence[Mapping[str, Any]],
    *,
    groundedness: Mapping[str, Any] | None,
    judge: Mapping[str, Any] | None,
    latency_ms: float,
    trace: str | None,
    relevance: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The results file's line for one question; `rounds`: its rounds' `runner run --json`
    objects (with `retrieval`), the first turn and, after a clarifying question, the follow-up."""
    final = rounds[-1]
    retrievals = [record for data in rounds for record in data.get("retrieval") or ()]
    return {
        "id": question.id,
        "question": question.question,
        "tags": list(question.tags),
        "line": question.line,
        "gold": [str(gold) for gold in question.sources],
        "outcome": final.get("outcome"),
        "turns": len(rounds),
        "conversation": conversation(question, rounds),
        "degraded": any(bool(data.get("degraded")) for data in rounds),
        "answer": final.get("answer"),
        "clarification": final.get("question"),
        "error": final.get("error"),
        "warnings": [w for data in rounds for w in data.get("warnings") or ()],
        "sources": list(final.get("sources") or ()),
        **retrieval_metrics(question, retrievals),
        **answer_metrics(question, final),
        "groundedness": None if groundedness is None else groundedness.get("share"),
        "grounding": groundedness,
        "relevance": None if relevance is None else relevance.get("share"),
        "addressing": relevance,
        "judge": judge,
        "llm": llm_usage(rounds),
        "latency_ms": round(latency_ms, 3),
        "session": final.get("session"),
        "trace": trace,
    }


def conversation(question: Question, rounds: Sequence[Mapping[str, Any]]) -> list[dict]:
    """The turns as the user and the pipeline took them: the question, and after a clarifying
    question the follow-up, each with the pipeline's reply."""
    said = [question.question, question.follow_up]
    turns = []
    for asked, data in zip(said, rounds, strict=False):
        reply = data.get("answer") or data.get("question") or data.get("error")
        turns.append({"user": asked, "outcome": data.get("outcome"), "reply": reply})
    return turns


def failed_record(question: Question, error: str, latency_ms: float) -> dict[str, Any]:
    """A question whose round could not run at all (not a tool in it: the round itself)."""
    return question_record(
        question,
        [{"outcome": "error", "error": error}],
        groundedness=None,
        judge=None,
        latency_ms=latency_ms,
        trace=None,
    )


# fields that differ between two runs of the same pipeline on the same questions (timings,
# session ids): left out when runs are compared for equality (a Ray run and a local one)
VOLATILE = ("latency_ms", "session")


def stable(record: Mapping[str, Any]) -> dict[str, Any]:
    """A record without its timings and session: what two identical runs share."""
    kept = {key: value for key, value in record.items() if key not in VOLATILE}
    llm = dict(kept.get("llm") or {})
    llm["by_purpose"] = {
        purpose: {key: value for key, value in usage.items() if key != "ms"}
        for purpose, usage in (llm.get("by_purpose") or {}).items()
    }
    kept["llm"] = llm
    return kept
