"""What each metric of a run means, in one sentence: printed with the figures (the report, every
`--format`), so that a number is never read without what it counts. docs/eval.md gives each at
length; a test keeps the two in step with `runner.eval.totals.METRICS`."""

from __future__ import annotations

from collections.abc import Iterable

DEFINITIONS: dict[str, str] = {
    "questions": "the questions of the set this run asked",
    "answered": "share of questions whose conversation ended with an answer",
    "clarified": "share of questions whose conversation ended with a clarifying question",
    "errors": "share of questions whose round could not run (its record says why)",
    "degraded": "share of questions with a round that went on without a failed part",
    "hit@1": "share of questions with sources whose gold page some retrieval ranked first",
    "hit@k": "share of questions with sources whose gold page some retrieval returned",
    "mrr": "mean of 1 / the best rank of a gold page (0 when none was returned)",
    "sourced": "share of questions with sources whose answer cites a gold source",
    "checks": "share of questions with answer texts whose answer holds every one of them",
    "groundedness": "mean share of an answer's sentences held by the cited pages on the "
    "question's topic",
    "relevance": "mean share of an answer's sentences that cite a page whose name (file and "
    "heading) shares a word with the question",
    "correctness": "the judge's mean score (0-1) of the answer against the reference answer",
    "faithfulness": "the judge's mean score (0-1) of how far the cited pages back the answer",
    "judged_relevance": "the judge's mean score (0-1) of whether the answer addresses the question",
    "llm_calls": "mean LLM calls of a question's rounds (the judge's not counted)",
    "tokens": "mean prompt + completion tokens of a question's rounds",
    "latency_p50_ms": "median time from a question's first message to its last result",
    "latency_p95_ms": "95th percentile of that time (nearest rank)",
}


def defined(names: Iterable[str]) -> dict[str, str]:
    """The definitions of these metrics, in their order."""
    return {name: DEFINITIONS[name] for name in names if name in DEFINITIONS}
