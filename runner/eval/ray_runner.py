"""Asking the questions on a Ray cluster (`--ray ADDRESS|auto|local`; the `ray` extra).

The pipeline is packed once (runner.eval.shipping) and put in the cluster's object store, so
each node fetches it once; one worker (a Ray actor) per CPU of the cluster unpacks it and opens
the runtime once, then asks batches of questions, `--jobs` at a time, as the local runner does
(runner.eval.local: the same Asker, so the same records). Results stream back batch by batch
as they finish; a batch whose worker died or raised is asked again (up to `RETRIES` times,
the worker restarted first when it died). A batch that fails every time is set aside (and its
worker, when it died for good) while the others are asked; the run then fails with
`BatchesFailed`, naming the questions set aside and why (the worker died, or what it raised:
`KeyError: 'x'`), and `--resume` asks them again. `local` starts a Ray cluster on this machine
for the run, and stops it after.

Every node needs runner installed (the same version), as any Ray job needs its code. A
cluster with token authentication takes the token from Ray's standard variables
(runner.eval.ray_auth).
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runner.eval.asking import Answered, Asker
from runner.eval.model import Question
from runner.eval.setup import EvalSpec, open_judge, open_runtime
from runner.eval.shipping import pack, unpack

RETRIES = 2
CLOSE_TIMEOUT_S = 30


class RayUnavailable(ImportError):
    """Ray is not installed, or the cluster cannot be reached."""


@dataclass(frozen=True)
class FailedBatch:
    questions: list[str]  # their ids
    cause: str


class BatchesFailed(RuntimeError):
    """Batches that failed on every attempt: their questions were not asked."""

    def __init__(self, failed: Sequence[FailedBatch]) -> None:
        self.questions = [question for batch in failed for question in batch.questions]
        causes = "; ".join(f"{', '.join(batch.questions)}: {batch.cause}" for batch in failed)
        count = len(self.questions)
        super().__init__(
            f"{count} question{'s' if count != 1 else ''} could not be asked on the Ray cluster, "
            f"each batch tried {1 + RETRIES} times ({causes})"
        )


class EvalWorker:
    """One Ray actor's runtime: the pipeline unpacked and opened once, batches asked on it."""

    def __init__(self, archive: bytes, spec: EvalSpec, jobs: int) -> None:
        from runner.sessions import SessionStore

        self.folder = Path(tempfile.mkdtemp(prefix="runner-eval-ray-"))
        self.spec = unpack(archive, self.folder, spec)
        self.jobs = jobs
        self.loop = asyncio.new_event_loop()
        self.runtime = open_runtime(self.spec)
        self.judge = open_judge(self.spec, self.runtime)
        self.store = SessionStore(self.folder / "sessions.sqlite")
        self.asker = Asker(self.runtime, self.store, self.judge)

    def ask(self, questions: Sequence[dict[str, Any]]) -> list[tuple[dict, list]]:
        from runner.eval.local import ask_each

        answered: list[Answered] = []
        batch = [Question.from_json(question) for question in questions]
        self.loop.run_until_complete(ask_each(self.asker, batch, self.jobs, answered.append))
        return [(each.record, each.events) for each in answered]

    def close(self) -> None:
        self.store.close()
        self.runtime.close()
        if self.judge is not None:
            self.judge.close()
        shutil.rmtree(self.folder, ignore_errors=True)


def _ray() -> Any:
    from runner.eval import ray_auth

    ray_auth.prepare()  # before Ray is imported: it reads RAY_AUTH_MODE then
    try:
        import ray
    except ImportError as error:
        raise RayUnavailable(
            "--ray needs Ray: pip install 'runner[ray]' (on every node of the cluster)"
        ) from error
    return ray


def _remote_worker(ray: Any) -> Any:
    @ray.remote(max_restarts=RETRIES, max_task_retries=RETRIES)
    class RemoteWorker(EvalWorker):
        @ray.method(retry_exceptions=True)
        def ask(self, questions: Sequence[dict[str, Any]]) -> list[tuple[dict, list]]:
            return super().ask(questions)

    return RemoteWorker


def batches(questions: Sequence[Question], size: int) -> Iterator[list[dict[str, Any]]]:
    for start in range(0, len(questions), size):
        yield [question.to_json() for question in questions[start : start + size]]


def run_on_ray(
    spec: EvalSpec,
    questions: Sequence[Question],
    done: Callable[[Answered], None],
    *,
    address: str,
    jobs: int = 1,
    batch: int = 16,
) -> dict[str, float]:
    """Returns how long building the indexes here, and asking on the cluster took (starting
    the workers, which open the pipeline, included)."""
    if not questions:
        return {}
    ray = _ray()
    started = time.perf_counter()
    _build_indexes(spec)
    built = time.perf_counter()
    started_here = not ray.is_initialized()
    if started_here:
        _connect(ray, address)
    try:
        archive = ray.put(pack(spec))
        workers = _start_workers(ray, archive, spec, jobs, len(questions), batch)
        try:
            failed = _ask_batches(ray, workers, batches(questions, batch), done)
        finally:
            _stop(ray, workers)
        if failed:
            raise BatchesFailed(failed)
        return {"open_s": round(built - started, 3), "ask_s": round(time.perf_counter() - built, 3)}
    finally:
        if started_here:
            ray.shutdown()


def _connect(ray: Any, address: str) -> None:
    try:
        ray.init(
            address=None if address == "local" else address,
            include_dashboard=False,
            log_to_driver=False,
            logging_level="ERROR",
        )
    except (ConnectionError, ray.exceptions.AuthenticationError) as error:
        import os

        from runner.eval.ray_auth import refused_message

        raise RayUnavailable(refused_message(address, error, os.environ)) from error


def _ask_batches(
    ray: Any,
    workers: list[Any],
    chunks: Iterator[list[dict[str, Any]]],
    done: Callable[[Answered], None],
) -> list[FailedBatch]:
    """Each batch asked on an idle worker, its answers handed to `done` as it finishes; the
    batches that failed after Ray's retries, set aside (and a worker that died for good, left
    out: when none is left, the batches not asked yet are set aside too)."""
    idle = list(workers)
    running: dict[Any, tuple[Any, list[dict[str, Any]]]] = {}
    failed: list[FailedBatch] = []
    for chunk in chunks:
        while not idle and running:
            idle.extend(_finish_one(ray, running, done, failed))
        if not idle:
            failed.append(FailedBatch(_ids(chunk), "every worker had died"))
            continue
        worker = idle.pop()
        running[worker.ask.remote(chunk)] = (worker, chunk)
    while running:
        _finish_one(ray, running, done, failed)
    return failed


def _finish_one(
    ray: Any,
    running: dict[Any, tuple[Any, list[dict[str, Any]]]],
    done: Callable[[Answered], None],
    failed: list[FailedBatch],
) -> list[Any]:
    """The next batch to finish, handed on or set aside; its worker, if it is still alive."""
    [ready], _ = ray.wait(list(running), num_returns=1)
    worker, chunk = running.pop(ready)
    try:
        answered = ray.get(ready)
    except ray.exceptions.RayActorError:
        failed.append(FailedBatch(_ids(chunk), "its worker died on every attempt"))
        return []
    except ray.exceptions.RayError as error:
        failed.append(FailedBatch(_ids(chunk), _raised(error)))
        return [worker]
    for record, events in answered:
        done(Answered(record, events))
    return [worker]


def _ids(chunk: list[dict[str, Any]]) -> list[str]:
    return [str(question["id"]) for question in chunk]


def _raised(error: Exception) -> str:
    """What the batch raised, as Python says it on its last line (`KeyError: 'x'`): a task's
    error carries the worker's exception as its `cause`."""
    cause = getattr(error, "cause", None) or error
    message = str(cause).strip()
    name = type(cause).__name__
    return f"{name}: {message.splitlines()[0]}" if message else name


def _stop(ray: Any, workers: list[Any]) -> None:
    """Each worker's copy of the pipeline removed, then the worker ended."""
    # a worker that died took its copy with it, or left it in its node's temporary folder
    with contextlib.suppress(Exception):
        ray.get([worker.close.remote() for worker in workers], timeout=CLOSE_TIMEOUT_S)
    for worker in workers:
        ray.kill(worker)


def _start_workers(
    ray: Any, archive: Any, spec: EvalSpec, jobs: int, count: int, batch: int
) -> list[Any]:
    cpus = int(ray.cluster_resources().get("CPU", 1))
    wanted = max(1, min(cpus, -(-count // batch)))
    remote = _remote_worker(ray)
    return [remote.options(num_cpus=1).remote(archive, spec, jobs) for _ in range(wanted)]


def _build_indexes(spec: EvalSpec) -> None:
    """The corpora's indexes built here, once, so that they travel with the pipeline."""
    runtime = open_runtime(spec)
    try:
        runtime.prepare()
    finally:
        runtime.close()
