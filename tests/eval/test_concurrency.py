"""`--jobs N` asks N questions at once in one process, through one LLM client: its `concurrency`
limit still holds across all the questions, and a progress line tells the time left."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

from runner.config.model import LLMConfig, ModelSettings
from runner.eval.evaluate import EvalOptions, evaluate
from runner.eval.progress import Progress
from runner.eval.setup import EvalSpec
from runner.llm.client import ProviderClient
from runner.llm.providers.base import ProviderReply
from runner.llm.providers.offline import respond
from runner.llm.types import LLMRequest


class CountingProvider:
    """The offline provider's replies, each after a short wait, counting calls in flight."""

    name = "counting"
    cacheable = False

    def __init__(self) -> None:
        self.in_flight = 0
        self.most = 0

    def prepare(self, settings: ModelSettings) -> None:
        """Nothing to prepare."""

    async def generate(self, request: LLMRequest, settings: ModelSettings) -> ProviderReply:
        self.in_flight += 1
        self.most = max(self.most, self.in_flight)
        try:
            await asyncio.sleep(0.01)
            return ProviderReply(respond(request))
        finally:
            self.in_flight -= 1


def test_jobs_share_one_client_whose_concurrency_limit_holds(
    hr_module: Path, tmp_path: Path
) -> None:
    provider = CountingProvider()
    client = ProviderClient(provider, LLMConfig(provider="offline", concurrency=2))
    outcome = evaluate(
        EvalSpec(hr_module),
        hr_module.parent / "eval" / "questions.yaml",
        EvalOptions(out=tmp_path / "run", jobs=6, client=client, progress=False, report=False),
    )
    assert outcome.summary["metrics"]["questions"] == 12
    assert provider.most == 2  # six rounds under way, never more than two calls at once


def test_the_progress_line_tells_the_rate_and_the_time_left() -> None:
    stream = io.StringIO()
    progress = Progress(100, stream=stream)
    progress.done = 25
    line = progress.line(progress.started + 10.0)  # 25 questions in 10 s
    assert "25/100" in line
    assert "2.5 q/s" in line
    assert "ETA 30s" in line


def test_a_resumed_runs_rate_counts_only_the_questions_it_asked() -> None:
    progress = Progress(100, done=50, stream=io.StringIO())
    progress.done = 60
    assert "1.0 q/s" in progress.line(progress.started + 10.0)
    assert "ETA 40s" in progress.line(progress.started + 10.0)
