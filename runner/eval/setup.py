"""What an evaluation runs with, said once and opened where the questions are asked: in this
process (`runner eval`), or in each Ray worker, from the same `EvalSpec`.

The runtime is opened as `runner run` opens it (the same options); each question gets a new
session in a temporary store of the run's own, so an evaluation never touches the sessions of
the pipeline's users.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from runner.eval.asking import Asker

if TYPE_CHECKING:
    from runner.app import Runtime
    from runner.eval.judge import Judge
    from runner.llm.client import ProviderClient


@dataclass(frozen=True)
class EvalSpec:
    pipeline: Path
    llm: str | None = None  # `--llm PROVIDER[:MODEL][@API_BASE]`
    llm_script: Path | None = None
    replay: Path | None = None
    cache: bool | None = None
    allow_python: bool = False
    build: bool = True
    judge: str | None = None  # `--judge PROVIDER[:MODEL][@API_BASE]`
    judge_script: Path | None = None

    def moved(self, pipeline: Path, **files: Path | None) -> EvalSpec:
        """The same spec on a copy of the pipeline (a Ray worker's), and its files there."""
        changes: dict[str, Any] = {"pipeline": pipeline, **files}  # replace checks the names
        return replace(self, **changes)


def open_runtime(
    spec: EvalSpec,
    *,
    index_progress: Callable[[str, str, int, int], None] | None = None,
    client: ProviderClient | None = None,
) -> Runtime:
    from runner.app import Runtime

    return Runtime.open(
        spec.pipeline,
        llm_override=spec.llm,
        llm_script=spec.llm_script,
        replay=spec.replay,
        cache=spec.cache,
        allow_python=spec.allow_python,
        build_indexes=spec.build,
        index_progress=index_progress,
        client=client,
    )


def open_judge(spec: EvalSpec, runtime: Runtime) -> Judge | None:
    """The judge's own client, on the pipeline's LLM settings with `--judge`'s provider."""
    if spec.judge is None and spec.judge_script is None:
        return None
    from runner.eval.judge import Judge
    from runner.llm import build_client

    pipeline = runtime.pipeline
    client = build_client(
        pipeline.llm,
        pipeline=pipeline,
        # a script names its provider (scripted), which `override` would beat
        override=spec.judge if spec.judge_script is None else None,
        script=spec.judge_script,
        cache=spec.cache,
    )
    return Judge(client)


@asynccontextmanager
async def asking(runtime: Runtime, judge: Judge | None) -> AsyncIterator[Asker]:
    """An Asker on the runtime, with a temporary session store, closed after."""
    from runner.sessions import SessionStore

    with (
        tempfile.TemporaryDirectory(prefix="runner-eval-") as folder,
        SessionStore(Path(folder) / "sessions.sqlite") as store,
    ):
        try:
            yield Asker(runtime, store, judge)
        finally:
            await _aclose(runtime, judge)


async def _aclose(runtime: Runtime, judge: Judge | None) -> None:
    # a model provider's connections belong to the loop that opened them
    aclose = getattr(runtime.client, "aclose", None)
    if aclose is not None:
        await aclose()
    if judge is not None:
        await judge.aclose()
    await asyncio.sleep(0)
