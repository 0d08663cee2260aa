"""Asking the questions in this process: `--jobs N` rounds at a time on one event loop.

Every question shares the one runtime, so the LLM client's `concurrency` limit holds across
all of them and its response cache is shared; `--jobs` only decides how many rounds are under
way at once (a round waiting for the model lets another one work).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from runner.eval.asking import Answered, Asker
from runner.eval.model import Question
from runner.eval.setup import EvalSpec, asking, open_judge, open_runtime

if TYPE_CHECKING:
    from runner.llm.client import ProviderClient


async def ask_each(
    asker: Asker, questions: Iterable[Question], jobs: int, done: Callable[[Answered], None]
) -> None:
    """Ask every question, `jobs` at a time; `done` gets each as it finishes. Questions are
    drawn one by one, so a set of 100k questions never has 100k rounds waiting in memory."""
    remaining = iter(questions)

    async def worker() -> None:
        for question in remaining:  # one iterator shared by the workers of one loop
            done(await asker.ask(question))

    await asyncio.gather(*(worker() for _ in range(max(1, jobs))))


def run_local(
    spec: EvalSpec,
    questions: Iterable[Question],
    done: Callable[[Answered], None],
    *,
    jobs: int = 1,
    index_progress: Callable[[str, str, int, int], None] | None = None,
    client: ProviderClient | None = None,
) -> dict[str, float]:
    """Returns how long opening the pipeline (its indexes included) and asking took."""
    started = time.perf_counter()
    runtime = open_runtime(spec, index_progress=index_progress, client=client)
    judge = None
    try:
        runtime.prepare()  # now, so that the first questions do not wait for it
        judge = open_judge(spec, runtime)
        opened = time.perf_counter()

        async def main() -> None:
            async with asking(runtime, judge) as asker:
                await ask_each(asker, questions, jobs, done)

        asyncio.run(main())
        return {
            "open_s": round(opened - started, 3),
            "ask_s": round(time.perf_counter() - opened, 3),
        }
    finally:
        runtime.close()
        if judge is not None:
            judge.close()
