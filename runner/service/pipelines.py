"""The service core: what the HTTP app (and the playground) call, in plain methods.

    service = Service.open(["pipelines/support"], state="postgresql://…")
    result = await service.run_round("support", "Is the KW-620 quiet?", request_id="r-1")
    service.session(result["session"]); service.round(result["session"], 1)
    service.close()

Each pipeline is loaded once (its LLM client, tools and corpus indexes: a `runner.app.Runtime`)
and serves every round of every session. A round is exactly `runner run --json`'s result. Two
requests on one session never interleave (`KeyLocks`), and a request id already committed
returns the stored result without running anything (`runner.app.replay`).

Every call names its `client` (runner.service.principals): it reaches only its own sessions and
idempotency keys (LOCAL, the one client of a service without tokens, owns all). What goes out
is redacted (runner.text.redact); sessions are read a window of rounds at a time; at most
`ServiceLimits.max_rounds_in_flight` rounds run at once (a 503 with Retry-After past it).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from runner.service import defaults
from runner.service.errors import BadRequest, NotFound, Unavailable, as_service_error
from runner.service.failures import log_round_error, log_unexpected
from runner.service.locks import HeldLock, KeyLocks
from runner.service.principals import LOCAL, Client, check_session_id, not_found_message
from runner.service.stores import distinct, open_stores
from runner.sessions.base import OpenSession
from runner.text.redact import Redactor, redact_logs

if TYPE_CHECKING:
    from runner.app import Conversation, RoundWatch, Runtime
    from runner.sessions import Store
    from runner.sessions.base import SessionState  # the state a store keeps

CLIENT_KEY = "client-key"  # the store's secret the clients' scopes are keyed with
# a round's result, its trace events and its time in seconds, told to each observer (metrics)
T = TypeVar("T")
RoundObserver = Callable[[str, dict[str, Any], list[dict[str, Any]], float], None]


@dataclass(frozen=True)
class ServiceLimits:
    max_message_chars: int = defaults.MAX_MESSAGE_CHARS
    lock_wait_s: float = defaults.LOCK_WAIT_S  # a request's wait for its session, then a 409
    max_request_id_chars: int = 200
    store_threads: int = 32  # blocking store calls in flight at once, off the event loop
    # rounds running at once in this worker (a stream's client that left still counts: its
    # round finishes and is stored); past it a round is refused with 503 and Retry-After
    max_rounds_in_flight: int = defaults.MAX_ROUNDS_IN_FLIGHT
    # rounds one client (a token) runs at once; None: a quarter of max_rounds_in_flight (at
    # least 1). The one client of a service without tokens has the whole worker
    max_rounds_per_client: int | None = None
    retry_after_s: int = 2

    @property
    def per_client(self) -> int:
        if self.max_rounds_per_client is not None:
            return self.max_rounds_per_client
        return max(1, self.max_rounds_in_flight // 4)

    rounds_shown: int = 50  # the rounds of a session read at once (the newest, or a page)


@dataclass
class Service:
    runtimes: dict[str, Runtime]  # by domain
    stores: dict[str, Store]  # by domain (one shared store, or each pipeline's default file)
    limits: ServiceLimits = field(default_factory=ServiceLimits)
    observers: list[RoundObserver] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._store_calls = ThreadPoolExecutor(
            max_workers=self.limits.store_threads, thread_name_prefix="runner-store"
        )
        self._locks = KeyLocks(self.limits.lock_wait_s, self._off_loop)
        self._in_flight = 0
        self._by_client: dict[str, int] = {}  # rounds in flight by client scope
        self._idle = asyncio.Event()
        self._idle.set()
        self.closing = False
        self._client_key: bytes | None = None
        self.redactor = Redactor(rt.pipeline.folder for rt in self.runtimes.values())
        redact_logs(self.redactor)  # the service's log lines too: a way out like any other

    @classmethod
    def open(
        cls,
        paths: Iterable[str | Path],
        *,
        state: str | None = None,
        store_file: str | None = None,
        limits: ServiceLimits | None = None,
        prepare: bool = True,
        **runtime_options: Any,
    ) -> Service:
        """Load every pipeline under `paths` (files or folders) with `Runtime.open`'s options,
        prepare them (`Runtime.prepare`: their corpus indexes opened, their models loaded),
        and open the store `state` names (RUNNER_STATE when None; else each pipeline's default
        SQLite file; `store_file`: that file in each pipeline's state folder instead,
        RUNNER_STATE left aside). Raises the CLI's errors (PipelineError …)."""
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
                if prepare:
                    runtime.prepare()  # before the service reports ready
            stores = open_stores(runtimes, state, open_store, store_file)
        except BaseException:
            for runtime in runtimes.values():
                runtime.close()
            raise
        return cls(runtimes, stores, limits or ServiceLimits())

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
        client: Client = LOCAL,
        create: bool = True,
        watch: RoundWatch | None = None,
    ) -> dict[str, Any]:
        """One round on `domain`, told to `watch` as it runs: `runner run --json`'s result (a
        clarifying question is a result too). A `request_id` already committed returns its stored
        result. A `session_id` that is not stored starts a session of that id when `create`, else is
        a NotFound (an HTTP client continues only the sessions the service gave it). Raises a
        ServiceError (NotFound, BadRequest, Busy, Unavailable) with the CLI's message."""
        from runner.app import Conversation, replay

        runtime = self.runtime(domain)
        self._check_round(message, session_id, request_id)
        check_session_id(session_id)
        if session_id is not None:
            client.check_owns(session_id)
        store = self.stores[domain]
        stored_key = client.request_key(domain, request_id)
        target = session_id or client.new_session_id()

        def begin() -> OpenSession | dict[str, Any]:
            """Under the lock, in the one hop that takes it: the stored result of this request
            (a send of it still running was waited for, not run a second time beside it), else
            the session to run the round on."""
            committed = replay(store, stored_key, message, session_id)  # the faces' one rule
            if committed is not None:
                return dict(committed.record.result)
            if session_id is None:
                return store.start(target, runtime.pipeline)
            opened = store.open(session_id, runtime.pipeline)
            if opened.created and not create:
                raise NotFound(not_found_message(session_id))
            return opened

        try:
            key, what = _lock_key(session_id, stored_key, request_id)
            async with self._round_slot(client), self._hold(store, key, what, begin) as held:
                begun, store_lock = held
                if isinstance(begun, OpenSession):
                    round_ = Conversation(runtime, store, begun, background_saves=True)
                    let_go = store_lock.release if store_lock is not None else None
                    return await self._run(round_, domain, message, stored_key, watch, let_go)
                return self.redactor.json(begun)
        except Exception as exc:
            log_unexpected(f"a round on {domain!r}", exc, self.redactor)
            raise as_service_error(exc) from exc

    async def _run(
        self,
        conversation: Conversation,
        domain: str,
        message: str,
        request_id: str | None,
        watch: RoundWatch | None,
        let_go: Callable[[], None] | None,
    ) -> dict[str, Any]:
        """The round, saved once at its end (runner.sessions.writers) and the session's lock let
        go (`let_go`) in the same hop, its result made and redacted once: what the faces send as
        it is."""
        started = time.perf_counter()
        result = await conversation.say(
            message, request_id=request_id, watch=watch, after_save=let_go
        )
        log_round_error(domain, result, self.redactor)
        data = result.to_json()
        data["warnings"] = [*conversation.warnings, *data["warnings"]]
        events = list(result.trace.events) if result.trace is not None else []
        elapsed = time.perf_counter() - started
        for observe in self.observers:
            observe(domain, data, events, elapsed)
        return self.redactor.json(data)

    async def off_loop(self, call: Callable[[], Any]) -> Any:
        """A blocking read (a session's page, a round) on the store threads."""
        return await self._off_loop(call)

    async def _off_loop(self, call: Callable[..., Any], *args: Any) -> Any:
        """A blocking store call on the service's store threads: a wait for the database is
        a wait for this round only, not for every round the worker serves."""
        return await asyncio.get_running_loop().run_in_executor(self._store_calls, call, *args)

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
    async def _hold(
        self, store: Store, key: str | None, what: str, begin: Callable[[], T]
    ) -> AsyncIterator[tuple[T, HeldLock | None]]:
        """The lock on `key` held for the block, what `begin` read under it (in the same hop to
        the store's threads), and the store's lock (None: nothing was locked), which the block
        may let go in its last save's hop."""
        if key is None:  # a new session, a fresh id and no request id: nothing to lock or read
            yield begin(), None
            return
        async with self._locks.hold(store, key, what, then=begin) as held:
            yield held  # type: ignore[misc]  # `then` given: what it returned

    @asynccontextmanager
    async def _round_slot(self, client: Client) -> AsyncIterator[None]:
        retry = {"Retry-After": str(self.limits.retry_after_s)}
        if self._in_flight >= self.limits.max_rounds_in_flight:
            raise Unavailable(
                f"this worker runs {self._in_flight} rounds already, its limit; send the "
                "request again in a moment (with the same request id to be safe)",
                headers=retry,
            )
        mine = self._by_client.get(client.scope, 0)
        if client.scope and mine >= self.limits.per_client:
            raise Unavailable(
                f"this client runs {mine} rounds already, its limit on this worker; send the "
                "request again once one has ended (with the same request id to be safe)",
                headers=retry,
            )
        self._in_flight += 1
        self._by_client[client.scope] = mine + 1
        self._idle.clear()
        try:
            yield
        finally:
            self._in_flight -= 1
            left = self._by_client.pop(client.scope, 1) - 1
            if left:
                self._by_client[client.scope] = left
            if not self._in_flight:
                self._idle.set()

    # --- sessions ------------------------------------------------------------------------

    def session(
        self,
        session_id: str,
        client: Client = LOCAL,
        *,
        before: int | None = None,
        limit: int | None = None,
    ) -> dict[str, Any]:
        """A session's state summary (status, pending question) and a window of its rounds:
        the newest `limit` (ServiceLimits.rounds_shown), or those before round `before`. `earlier`
        is the `before` of the page preceding this one (None: this page starts at round 1)."""
        client.check_owns(session_id)
        store, state, version = self._find(session_id)
        last = state.rounds if before is None else min(before - 1, state.rounds)
        count = max(1, min(limit or self.limits.rounds_shown, self.limits.rounds_shown))
        first = max(1, last - count + 1)
        rounds = store.rounds_between(session_id, first, last) if last >= 1 else []
        summary = {
            "session": session_id,
            "domain": self._domain_of(state),
            "status": _status(state),
            "version": version,
            "question": state.pending.question if state.waiting and state.pending else None,
            "rounds_total": state.rounds,
            "earlier": first if first > 1 else None,
            "rounds": [
                {
                    "round": record.round,
                    "message": record.message,
                    "outcome": record.outcome,
                    "answer": record.result.get("answer"),
                    "question": record.result.get("question"),
                    "request_id": client.shown_request_id(record.request_id),
                    "at": record.at,
                }
                for record in rounds
            ],
        }
        return self.redactor.json(summary)

    def round(self, session_id: str, number: int, client: Client = LOCAL) -> dict[str, Any]:
        """A finished round: its message, its result (as `runner run --json`) and its trace."""
        client.check_owns(session_id)
        store, _state, _version = self._find(session_id)
        for record in store.rounds_between(session_id, number, number):
            return self.redactor.json(
                {
                    "session": session_id,
                    "round": record.round,
                    "message": record.message,
                    "outcome": record.outcome,
                    "request_id": client.shown_request_id(record.request_id),
                    "at": record.at,
                    "result": dict(record.result),
                    "trace": [dict(event) for event in record.trace],
                }
            )
        raise NotFound(f"session {session_id!r} has no finished round {number}")

    def _find(self, session_id: str) -> tuple[Store, SessionState, int]:
        try:
            for store in distinct(self.stores.values()):
                found = store.find(session_id)
                if found is not None:
                    return store, *found
        except Exception as exc:
            raise as_service_error(exc) from exc
        raise NotFound(not_found_message(session_id))

    def _domain_of(self, state: SessionState) -> str | None:
        stored = Path(state.pipeline_path)
        for domain, runtime in self.runtimes.items():
            path = runtime.pipeline.path
            if stored.resolve() == path.resolve() or stored.name == path.name:
                return domain
        return None

    def client_key(self) -> bytes:
        """The secret the clients' scopes are keyed with: the first store's, the same for every
        worker that opens it (so a session is its token's on any of them, after restarts too)."""
        if self._client_key is None:
            store = distinct(self.stores.values())[0]
            self._client_key = bytes.fromhex(store.secret(CLIENT_KEY))
        return self._client_key

    # --- health and shutdown -------------------------------------------------------------

    def readiness(self) -> dict[str, Any]:
        """{"ready": bool, "pipelines": [...], "store": "ok" | its error, "closing",
        "rounds_in_flight"}."""
        problems: dict[str, str] = {}
        for store in distinct(self.stores.values()):
            try:
                store.ping()
            except Exception as exc:
                location = self.redactor.error(store.location)
                problems[location] = self.redactor.error(as_service_error(exc).message)
        ready = bool(self.runtimes) and not problems and not self.closing
        return {
            "ready": ready,
            "pipelines": sorted(self.runtimes),
            "store": problems or "ok",
            "closing": self.closing,
            "rounds_in_flight": self._in_flight,  # of --max-rounds-in-flight
        }

    @property
    def in_flight(self) -> int:
        return self._in_flight

    async def drain(self, timeout_s: float) -> bool:
        """Refuse new rounds and wait for those in flight; True when all finished in time.
        A round still running afterwards is cut off at its last saved checkpoint (at most
        runner.sessions.writers.CHECKPOINT_DELAY_S older than its newest step), and the next
        request on its session finishes it, on any worker."""
        self.closing = True
        try:
            await asyncio.wait_for(self._idle.wait(), timeout=timeout_s)
        except asyncio.TimeoutError:
            return False
        return True

    async def prune(self, older_than_s: float) -> int:
        """Delete the sessions idle for more than `older_than_s` seconds; how many."""
        cut = time.time() - older_than_s
        stores = distinct(self.stores.values())
        counts = [await self._off_loop(store.prune, cut) for store in stores]
        return sum(counts)

    def close(self) -> None:
        self._store_calls.shutdown(wait=True)
        for store in distinct(self.stores.values()):
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


def _lock_key(
    session_id: str | None, stored_key: str | None, request_id: str | None
) -> tuple[str | None, str]:
    if session_id is not None:
        return session_id, f"session {session_id!r}"
    if stored_key is not None:  # a new session: two sends of one request must not make two
        return f"request:{stored_key}", f"request id {request_id!r}"
    return None, "a new session"


def _status(state: SessionState) -> str:
    from runner.sessions.base import session_status

    return session_status(state.to_json())


__all__: Sequence[str] = ("RoundObserver", "Service", "ServiceLimits", "pipeline_summary")
