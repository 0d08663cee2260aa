"""The service core: what the HTTP app (and the playground) call, in plain methods.

    service = Service.open(["pipelines/support"], state="postgresql://…")
    result = await service.run_round("support", "Is the KW-620 quiet?", request_id="r-1")
    service.session(result["session"]); service.round(result["session"], 1)
    service.close()

Each pipeline is loaded once (its LLM client, tools and corpus indexes: a `runner.app.Runtime`)
and serves every round of every session. A round is exactly `runner run --json`'s result. Two
requests on one session never interleave (`KeyLocks`), and a request id already committed
returns the stored result without running anything (`runner.app.replay`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from runner.serve.errors import BadRequest, NotFound, Unavailable, as_service_error
from runner.serve.locks import KeyLocks

if TYPE_CHECKING:
    from runner.app import Runtime
    from runner.sessions import Store
    from runner.sessions.base import SessionState  # the state a store keeps

# a round's result, its trace events and its time in seconds, told to each observer (metrics)
RoundObserver = Callable[[str, dict[str, Any], list[dict[str, Any]], float], None]


@dataclass(frozen=True)
class Limits:
    max_message_chars: int = 8_000
    lock_wait_s: float = 30.0  # how long a request waits for its session before a 409
    max_request_id_chars: int = 200
    store_threads: int = 32  # blocking store calls in flight at once, off the event loop


@dataclass
class Service:
    runtimes: dict[str, Runtime]  # by domain
    stores: dict[str, Store]  # by domain (one shared store, or each pipeline's default file)
    limits: Limits = field(default_factory=Limits)
    observers: list[RoundObserver] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._store_calls = ThreadPoolExecutor(
            max_workers=self.limits.store_threads, thread_name_prefix="runner-store"
        )
        self._locks = KeyLocks(self.limits.lock_wait_s, self._off_loop)
        self._in_flight = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self.closing = False

    @classmethod
    def open(
        cls,
        paths: Iterable[str | Path],
        *,
        state: str | None = None,
        limits: Limits | None = None,
        open_corpora: bool = True,
        **runtime_options: Any,
    ) -> Service:
        """Load every pipeline under `paths` (files or folders) with `Runtime.open`'s options,
        open their corpus indexes, and open the store `state` names (RUNNER_STATE when None;
        else each pipeline's default SQLite file). Raises the CLI's errors (PipelineError …)."""
        from runner.app import Runtime
        from runner.config import find_pipeline_files
        from runner.sessions import open_store

        files = find_pipeline_files(list(paths))
        if not files:
            raise BadRequest(f"no pipeline files in {', '.join(map(str, paths))}")
        runtimes: dict[str, Runtime] = {}
        stores: dict[str, Store] = {}
        try:
            for file in files:
                runtime = Runtime.open(file, **runtime_options)
                domain = runtime.pipeline.domain
                if domain in runtimes:
                    runtime.close()
                    raise BadRequest(
                        f"{file}: domain {domain!r} is served already by "
                        f"{runtimes[domain].pipeline.path}; serve one pipeline per domain"
                    )
                runtimes[domain] = runtime
                if open_corpora:
                    runtime.open_corpora()
            stores = _open_stores(runtimes, state, open_store)
        except BaseException:
            for runtime in runtimes.values():
                runtime.close()
            raise
        return cls(runtimes, stores, limits or Limits())

    # --- pipelines -----------------------------------------------------------------------

    def pipelines(self) -> list[dict[str, Any]]:
        """Each domain with its description, tools and corpora."""
        return [pipeline_summary(runtime) for runtime in self.runtimes.values()]

    def runtime(self, domain: str) -> Runtime:
        try:
            return self.runtimes[domain]
        except KeyError:
            known = ", ".join(sorted(self.runtimes)) or "none"
            raise NotFound(f"no pipeline {domain!r} is served here (domains: {known})") from None

    # --- rounds --------------------------------------------------------------------------

    async def run_round(
        self,
        domain: str,
        message: str,
        *,
        session_id: str | None = None,
        request_id: str | None = None,
    ) -> dict[str, Any]:
        """One round on `domain`: `runner run --json`'s result (a clarifying question is a
        result too). A `request_id` already committed returns its stored result. Raises a
        ServiceError (NotFound, BadRequest, Busy, Unavailable) with the CLI's message."""
        runtime = self.runtime(domain)
        self._check_round(message, session_id, request_id)
        store = self.stores[domain]
        try:
            key, what = _lock_key(session_id, request_id)
            async with self._round_slot(), self._hold(store, key, what):
                # under the lock: a send of this request still running is waited for, not run
                # a second time beside it
                stored = await self._off_loop(
                    self._replayed, store, request_id, message, session_id
                )
                if stored is not None:
                    return stored
                return await self._run(runtime, store, domain, message, session_id, request_id)
        except Exception as exc:
            raise as_service_error(exc) from exc

    async def _run(
        self,
        runtime: Runtime,
        store: Store,
        domain: str,
        message: str,
        session_id: str | None,
        request_id: str | None,
    ) -> dict[str, Any]:
        started = time.perf_counter()
        conversation = await self._off_loop(runtime.conversation, store, session_id)
        conversation.background_saves = True
        result = await conversation.say(message, request_id=request_id)
        data = result.to_json()
        data["warnings"] = [*conversation.warnings, *data["warnings"]]
        events = list(result.trace.events) if result.trace is not None else []
        elapsed = time.perf_counter() - started
        for observe in self.observers:
            observe(domain, data, events, elapsed)
        return data

    async def _off_loop(self, call: Callable[..., Any], *args: Any) -> Any:
        """A blocking store call on the service's store threads: a wait for the database is
        a wait for this round only, not for every round the worker serves."""
        return await asyncio.get_running_loop().run_in_executor(self._store_calls, call, *args)

    def _replayed(
        self, store: Store, request_id: str | None, message: str, session_id: str | None
    ) -> dict[str, Any] | None:
        from runner.app import replay

        committed = replay(store, request_id, message, session_id)
        return None if committed is None else dict(committed.record.result)

    def _check_round(self, message: str, session_id: str | None, request_id: str | None) -> None:
        if self.closing:
            raise Unavailable(
                "this worker is shutting down; send the request again (with the same request "
                "id), another worker will take it"
            )
        if not isinstance(message, str) or not message.strip():
            raise BadRequest("`message` must be a non-empty string")
        if len(message) > self.limits.max_message_chars:
            raise BadRequest(
                f"the message has {len(message):,} characters, more than this service's limit "
                f"of {self.limits.max_message_chars:,}; shorten it"
            )
        for name, value in (("session_id", session_id), ("request_id", request_id)):
            if value is not None and (
                not isinstance(value, str)
                or not value.strip()
                or len(value) > self.limits.max_request_id_chars
            ):
                raise BadRequest(
                    f"`{name}` must be a non-empty string of at most "
                    f"{self.limits.max_request_id_chars} characters"
                )

    @asynccontextmanager
    async def _hold(self, store: Store, key: str | None, what: str) -> AsyncIterator[None]:
        if key is None:  # a new session with a fresh id: nobody else can name it
            yield
            return
        async with self._locks.hold(store, key, what):
            yield

    @asynccontextmanager
    async def _round_slot(self) -> AsyncIterator[None]:
        self._in_flight += 1
        self._idle.clear()
        try:
            yield
        finally:
            self._in_flight -= 1
            if not self._in_flight:
                self._idle.set()

    # --- sessions ------------------------------------------------------------------------

    def session(self, session_id: str) -> dict[str, Any]:
        """A session's state summary (status, pending question) and its rounds."""
        store, state, version = self._find(session_id)
        rounds = store.rounds(session_id)
        return {
            "session": session_id,
            "domain": self._domain_of(state),
            "status": _status(state),
            "version": version,
            "question": state.pending.question if state.waiting and state.pending else None,
            "rounds": [
                {
                    "round": record.round,
                    "message": record.message,
                    "outcome": record.outcome,
                    "answer": record.result.get("answer"),
                    "question": record.result.get("question"),
                    "request_id": record.request_id,
                    "at": record.at,
                }
                for record in rounds
            ],
        }

    def round(self, session_id: str, number: int) -> dict[str, Any]:
        """A finished round: its message, its result (as `runner run --json`) and its trace."""
        store, _state, _version = self._find(session_id)
        for record in store.rounds(session_id):
            if record.round == number:
                return {
                    "session": session_id,
                    "round": record.round,
                    "message": record.message,
                    "outcome": record.outcome,
                    "request_id": record.request_id,
                    "at": record.at,
                    "result": dict(record.result),
                    "trace": [dict(event) for event in record.trace],
                }
        raise NotFound(f"session {session_id!r} has no finished round {number}")

    def _find(self, session_id: str) -> tuple[Store, SessionState, int]:
        from runner.sessions import SessionNotFoundError

        try:
            for store in _distinct(self.stores.values()):
                found = store.find(session_id)
                if found is not None:
                    return store, *found
        except Exception as exc:
            raise as_service_error(exc) from exc
        where = ", ".join(store.location for store in _distinct(self.stores.values()))
        raise as_service_error(SessionNotFoundError(f"no session {session_id!r} in {where}"))

    def _domain_of(self, state: SessionState) -> str | None:
        stored = Path(state.pipeline_path)
        for domain, runtime in self.runtimes.items():
            path = runtime.pipeline.path
            if stored.resolve() == path.resolve() or stored.name == path.name:
                return domain
        return None

    # --- health and shutdown -------------------------------------------------------------

    def readiness(self) -> dict[str, Any]:
        """{"ready": bool, "pipelines": [...], "store": "ok" | its error}."""
        problems: dict[str, str] = {}
        for store in _distinct(self.stores.values()):
            try:
                store.ping()
            except Exception as exc:
                problems[store.location] = as_service_error(exc).message
        ready = bool(self.runtimes) and not problems and not self.closing
        return {
            "ready": ready,
            "pipelines": sorted(self.runtimes),
            "store": problems or "ok",
            "closing": self.closing,
        }

    @property
    def in_flight(self) -> int:
        return self._in_flight

    async def drain(self, timeout_s: float) -> bool:
        """Refuse new rounds and wait for those in flight; True when all finished in time.
        A round still running afterwards is cut off at its last checkpoint (every step is
        saved), and the next request on its session finishes it, on any worker."""
        self.closing = True
        try:
            await asyncio.wait_for(self._idle.wait(), timeout=timeout_s)
        except asyncio.TimeoutError:
            return False
        return True

    def close(self) -> None:
        self._store_calls.shutdown(wait=True)
        for store in _distinct(self.stores.values()):
            store.close()
        for runtime in self.runtimes.values():
            runtime.close()


def pipeline_summary(runtime: Runtime) -> dict[str, Any]:
    pipeline = runtime.pipeline
    return {
        "domain": pipeline.domain,
        "description": pipeline.description,
        "tools": [
            {"name": tool.name, "kind": tool.kind.value, "description": tool.description}
            for tool in pipeline.tools
        ],
        "corpora": sorted(pipeline.corpora),
    }


def _open_stores(
    runtimes: dict[str, Runtime], state: str | None, open_store: Callable[..., Store]
) -> dict[str, Store]:
    """One store for all when `state` (or RUNNER_STATE) names one; else each pipeline's
    default file, opened once per file."""
    from runner.sessions.open import state_setting

    stores: dict[str, Store] = {}
    if state_setting(state) is not None:
        shared = open_store(state)
        return {domain: shared for domain in runtimes}
    by_location: dict[str, Store] = {}
    for domain, runtime in runtimes.items():
        store = open_store(None, runtime.pipeline)
        if store.location in by_location:
            store.close()
            store = by_location[store.location]
        by_location[store.location] = store
        stores[domain] = store
    return stores


def _distinct(stores: Iterable[Store]) -> list[Store]:
    seen: list[Store] = []
    for store in stores:
        if all(store is not other for other in seen):
            seen.append(store)
    return seen


def _lock_key(session_id: str | None, request_id: str | None) -> tuple[str | None, str]:
    if session_id is not None:
        return session_id, f"session {session_id!r}"
    if request_id is not None:  # a new session: two sends of one request must not make two
        return f"request:{request_id}", f"request id {request_id!r}"
    return None, "a new session"


def _status(state: SessionState) -> str:
    from runner.sessions.base import session_status

    return session_status(state.to_json())


__all__: Sequence[str] = ("Limits", "RoundObserver", "Service", "pipeline_summary")
