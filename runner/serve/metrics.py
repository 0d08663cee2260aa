"""`/metrics` in Prometheus format: rounds by outcome, degraded rounds, LLM calls and tokens by
purpose, round and LLM call latency, the time to a streamed answer's first token. Each service
has its own registry (tests start several); with `--workers N` every worker writes to one
multiprocess folder (PROMETHEUS_MULTIPROC_DIR) and any worker's `/metrics` shows the sum."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
)

if TYPE_CHECKING:
    from runner.service.pipelines import Service

ROUND_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120)
LLM_BUCKETS = (0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60)


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        registry = self.registry
        self.rounds = Counter(
            "runner_rounds",
            "Rounds by domain and outcome.",
            ["domain", "outcome"],
            registry=registry,
        )
        self.degraded = Counter(
            "runner_degraded_rounds",
            "Rounds that ended with warnings (part of the work failed or was cut).",
            ["domain"],
            registry=registry,
        )
        self.round_seconds = Histogram(
            "runner_round_seconds",
            "Time of a round in the service.",
            ["domain"],
            buckets=ROUND_BUCKETS,
            registry=registry,
        )
        self.llm_calls = Counter(
            "runner_llm_calls",
            "LLM calls (attempts) by purpose and outcome.",
            ["domain", "purpose", "outcome"],
            registry=registry,
        )
        self.llm_tokens = Counter(
            "runner_llm_tokens",
            "LLM tokens by purpose and kind (prompt, completion).",
            ["domain", "purpose", "kind"],
            registry=registry,
        )
        self.llm_seconds = Histogram(
            "runner_llm_call_seconds",
            "Time of one LLM call.",
            ["domain", "purpose"],
            buckets=LLM_BUCKETS,
            registry=registry,
        )

        self.first_token_seconds = Histogram(
            "runner_time_to_first_token_seconds",
            "From a round's start to the first piece of its answer, for answers streamed as "
            "the model wrote them.",
            ["domain"],
            buckets=ROUND_BUCKETS,
            registry=registry,
        )

    @classmethod
    def install(cls, service: Service) -> Metrics:
        metrics = cls()
        service.observers.append(metrics.observe)
        return metrics

    def observe(
        self, domain: str, result: dict[str, Any], events: list[dict[str, Any]], seconds: float
    ) -> None:
        self.rounds.labels(domain, result["outcome"]).inc()
        if result.get("warnings"):
            self.degraded.labels(domain).inc()
        self.round_seconds.labels(domain).observe(seconds)
        first_token = time_to_first_token(events)
        if first_token is not None:
            self.first_token_seconds.labels(domain).observe(first_token)
        for event in events:
            if event.get("event") != "llm.call":
                continue
            purpose = str(event.get("purpose", "unknown"))
            self.llm_calls.labels(domain, purpose, str(event.get("outcome", "ok"))).inc()
            self.llm_tokens.labels(domain, purpose, "prompt").inc(event.get("prompt_tokens", 0))
            self.llm_tokens.labels(domain, purpose, "completion").inc(
                event.get("completion_tokens", 0)
            )
            self.llm_seconds.labels(domain, purpose).observe(
                float(event.get("latency_ms", 0)) / 1000
            )

    def render(self) -> tuple[bytes, str]:
        if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
            from prometheus_client import multiprocess

            merged = CollectorRegistry()
            multiprocess.MultiProcessCollector(merged)
            return generate_latest(merged), CONTENT_TYPE_LATEST
        return generate_latest(self.registry), CONTENT_TYPE_LATEST


def time_to_first_token(events: list[dict[str, Any]]) -> float | None:
    """Seconds from the round's start to the first piece of its streamed answer: the streamed
    call's event (recorded when it ended) less its time, plus when its first text came."""
    start = next((e["ms"] for e in events if e.get("event") == "round.start"), None)
    for event in events:
        if event.get("event") == "llm.call" and event.get("first_token_ms") is not None:
            began = float(event["ms"]) - float(event.get("latency_ms") or 0)
            return max(0.0, began + float(event["first_token_ms"]) - float(start or 0)) / 1000
    return None
