"""The one LLM client of a run: retries, timeouts, a concurrency limit, structured replies, the
optional response cache, recording, and accounting — the same for every provider.

Policy for one request:
- each provider attempt runs under the per-client concurrency limit and `timeout_s`; the wait
  for a slot is recorded apart from the call's own time (`queue_ms`, `latency_ms`);
- transient failures (connection errors, timeouts, HTTP 429 and 5xx, an HTTP 200 whose body is
  not JSON) are retried up to `max_retries` times with exponential backoff and jitter; other
  errors (HTTP 4xx…) are not;
- a server that refuses the structured-output field is asked again at once with the next mode
  down, kept for the model for the rest of the run (runner.llm.structured_modes);
- an unusable reply — invalid against its schema, or where text is expected empty, citations
  alone, or degenerate with nothing left once cut — is asked again `structured_retries` times
  with the problem appended to the prompt, then fails with LLMReplyError;
- a degenerate text reply — a sentence repeated until `max_tokens`, the prompt (as sent, its
  correction included) echoed (runner.llm.degenerate) — is asked again once, saying so; when it
  stays degenerate, what is left once the repeats are cut is the reply, and its call record
  says `degenerate`, which makes the round degraded.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
import time
import weakref
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

from runner.config.model import LLMConfig, ModelSettings
from runner.llm import degenerate, structured
from runner.llm.accepted_modes import AcceptedModes
from runner.llm.accounting import Accounting, CallRecord
from runner.llm.cache import CachedReply, ResponseCache, cache_key
from runner.llm.cassette import Entry, Recorder
from runner.llm.endpoint import model_server
from runner.llm.errors import LLMCallError, LLMError, LLMReplyError, describe_error
from runner.llm.exchanges import exchange
from runner.llm.providers.base import (
    DEFAULT_CONTEXT_WINDOW,
    Provider,
    ProviderReply,
    StreamingProvider,
)
from runner.llm.retrying import backoff_delay, is_broken_body, is_transient
from runner.llm.settings import model_settings
from runner.llm.streaming import Deltas
from runner.llm.structured_modes import StructuredModes
from runner.llm.types import LLMReply, LLMRequest, Purpose
from runner.llm.usable import NothingLeft, correction, excerpt, says_something, usable
from runner.text.words import estimate_tokens

if TYPE_CHECKING:
    from runner.llm.bound import TaskClient


@dataclasses.dataclass(frozen=True)
class _Answer:
    """One call's reply as the client keeps it: text, usage and how it ended."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    cached: bool
    estimated: bool = False  # the provider reported no usage; counts are estimates
    finish_reason: str | None = None
    first_token_ms: float | None = None  # streamed: when the first text arrived
    response_model: str | None = None
    response_id: str | None = None


@dataclasses.dataclass
class _Timing:
    """One attempt's wait for a concurrency slot, and when its call began."""

    queue_ms: float = 0.0
    started: float = dataclasses.field(default_factory=time.perf_counter)
    first_token_ms: float | None = None

    def call_ms(self) -> float:
        return (time.perf_counter() - self.started) * 1000

    def passing_to(self, on_delta: Deltas) -> Deltas:
        """`on_delta`, noting when the first text arrived."""

        def delta(text: str) -> None:
            if self.first_token_ms is None and text:
                self.first_token_ms = round(self.call_ms(), 3)
            on_delta(text)

        return delta


class ProviderClient:
    """Implements `LLMClient`. A round calls it through a `TaskClient` (runner.llm.bound),
    which says where the call's record goes, which task it is for and where a streamed answer
    goes (`complete_for`); `complete` is a call made outside any round, recorded in the
    client's own `.calls` (`.stats` totals them by purpose)."""

    def __init__(
        self,
        provider: Provider,
        config: LLMConfig,
        *,
        cache: ResponseCache | None = None,
        recorder: Recorder | None = None,
        accepted_modes: AcceptedModes | None = None,
        backoff_base_s: float = 0.5,
        backoff_max_s: float = 8.0,
    ) -> None:
        self.provider = provider
        self.config = config
        self.cache = cache
        self.recorder = recorder
        self.backoff_base_s = backoff_base_s
        self.backoff_max_s = backoff_max_s
        self._random = random.Random()
        self._accounting = Accounting()  # the calls made outside any round
        self._limits: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary()
        )
        self.modes = StructuredModes(provider, config.api_base, accepted_modes)
        self._windows: dict[str | None, int | None] = {}

    @property
    def notices(self) -> list[str]:
        """Said once per run: a structured-output fallback (`StructuredModes`)."""
        return self.modes.notices

    @property
    def calls(self) -> list[CallRecord]:
        return self._accounting.calls

    @property
    def stats(self) -> dict[str, Any]:
        return self._accounting.stats()

    def complete_sync(self, request: LLMRequest) -> LLMReply:
        """For the edges (the CLI) only; everything else awaits `complete`."""
        return asyncio.run(self.complete(request))

    def close(self) -> None:
        if self.cache is not None:
            self.cache.close()

    async def aclose(self) -> None:
        """Close the provider's connections of the running event loop (call it before the
        loop ends, e.g. at the end of the coroutine that `asyncio.run` runs)."""
        close = getattr(self.provider, "aclose", None)
        if close is not None:
            await close()

    async def complete(self, request: LLMRequest) -> LLMReply:
        return await self.complete_for(request, None)

    async def complete_for(self, request: LLMRequest, scope: TaskClient | None) -> LLMReply:
        """Answer `request` for `scope`'s round and task (None: outside any round)."""
        records = self._accounting.calls if scope is None else scope.calls
        settings = model_settings(self.config, request.purpose)
        started = time.perf_counter()
        rounds = 1 + self.config.structured_retries
        prompt, attempts = request.prompt, 0
        last_error, last_text = structured.InvalidReply("no reply"), ""
        asked_again = False  # a degenerate reply is asked again once
        for number in range(rounds):
            asked = dataclasses.replace(request, prompt=prompt)
            answer, attempts, record = await self._answer(asked, settings, attempts, scope)
            try:
                data = usable(answer.text, request)
                # read against the prompt as sent: a model may echo the correction it was given
                wrong = degenerate.in_reply(answer.text, asked)
                if wrong is not None and not says_something(wrong.cut, request):
                    raise NothingLeft(wrong.detail, wrong.correction())
            except structured.InvalidReply as error:
                self._mark(records, record, outcome="invalid", error=str(error))
                prompt = request.prompt + correction(error, request)
                last_error, last_text = error, answer.text
                continue
            if wrong is not None and not asked_again and number + 1 < rounds:
                self._mark(records, record, outcome="degenerate", error=wrong.detail)
                prompt, asked_again = request.prompt + wrong.correction(), True
                continue
            if wrong is not None:
                self._mark(records, record, degenerate=f"{wrong.detail}; the reply was cut")
                answer = dataclasses.replace(answer, text=wrong.cut)
            return self._accept(asked, settings, answer, data, attempts, started, wrong is None)
        raise LLMReplyError(
            f"the {request.purpose.value} reply{_for_tool(request)} was not usable after "
            f"{rounds} attempt(s): {last_error}. Reply was: {excerpt(last_text)}",
            purpose=request.purpose.value,
            tool=request.tool,
            reply=last_text,
        )

    async def context_window(self, purpose: Purpose) -> int | None:
        """The window the purpose's prompts must fit, in tokens: `llm.context_window` (per
        purpose too), else what a model provider's server states, else 8192 for a model; None
        for the local providers when the pipeline gives none (nothing to fit)."""
        settings = model_settings(self.config, purpose)
        if settings.context_window:
            return settings.context_window
        probe = getattr(self.provider, "reported_window", None)
        if probe is None:
            return None
        if settings.model not in self._windows:
            reported = await asyncio.to_thread(probe, settings)
            self._windows[settings.model] = reported or DEFAULT_CONTEXT_WINDOW
        return self._windows[settings.model]

    def _accept(
        self,
        request: LLMRequest,
        settings: ModelSettings,
        answer: _Answer,
        data: Any,
        attempts: int,
        started: float,
        cacheable: bool = True,
    ) -> LLMReply:
        if self.cache is not None and not answer.cached and cacheable:
            key = cache_key(self.provider.name, settings, request.prompt, request.schema)
            self.cache.put(
                key, CachedReply(answer.text, answer.prompt_tokens, answer.completion_tokens)
            )
        return LLMReply(
            text=answer.text,
            data=data,
            prompt_tokens=answer.prompt_tokens,
            completion_tokens=answer.completion_tokens,
            latency_ms=(time.perf_counter() - started) * 1000,
            cached=answer.cached,
            provider=self.provider.name,
            model=self._model(settings),
            attempts=attempts,
        )

    async def _answer(
        self,
        request: LLMRequest,
        settings: ModelSettings,
        attempts: int,
        scope: TaskClient | None,
    ) -> tuple[_Answer, int, int]:
        """One reply text, from the cache or the provider (retrying transient errors, stepping
        down a refused structured mode), the attempts so far, and the index of its call
        record in `scope`'s calls."""
        cached = self._cached(request, settings)
        if cached is not None:
            record = self._record(
                scope, request, settings, cached, _Timing(), attempts + 1, cached=True
            )
            self._add_to_cassette(request, cached)
            return cached, attempts + 1, record
        settings = self.modes.settings_for(request, settings)
        retry = 0
        while True:
            attempts += 1
            timing = _Timing()
            try:
                self.provider.prepare(settings)
                timing.started = time.perf_counter()  # the call's time, not the start-up's
                answer = await self._attempt(request, settings, timing, scope)
            except Exception as error:
                if isinstance(error, LLMError):
                    self._record_error(scope, request, settings, timing, attempts, error)
                    raise
                lower, notice = self.modes.step_down(settings, error)
                self._record_error(scope, request, settings, timing, attempts, error, notice)
                if lower is not None:
                    settings = lower  # asked again at once, without the refused field
                    continue
                if not is_transient(error) or retry == self.config.max_retries:
                    raise self._call_error(request, error, attempts) from error
                delay = backoff_delay(retry, self.backoff_base_s, self.backoff_max_s, self._random)
                retry += 1
                await asyncio.sleep(delay)
                continue
            record = self._record(scope, request, settings, answer, timing, attempts)
            self._add_to_cassette(request, answer)
            return answer, attempts, record

    def _add_to_cassette(self, request: LLMRequest, answer: _Answer) -> None:
        """Every answered prompt, cached or not, so that a replay meets each one."""
        if self.recorder is not None:
            self.recorder.add(
                Entry(request.purpose.value, request.tool, request.prompt, answer.text)
            )

    async def _attempt(
        self,
        request: LLMRequest,
        settings: ModelSettings,
        timing: _Timing,
        scope: TaskClient | None,
    ) -> _Answer:
        queued = time.perf_counter()
        async with self._limit():
            timing.queue_ms = (time.perf_counter() - queued) * 1000
            timing.started = time.perf_counter()
            reply = await asyncio.wait_for(
                self._generate(request, settings, timing, scope), self.config.timeout_s
            )
        return _Answer(
            text=reply.text,
            prompt_tokens=_or_estimate(reply.prompt_tokens, request.prompt),
            completion_tokens=_or_estimate(reply.completion_tokens, reply.text),
            cached=False,
            estimated=reply.prompt_tokens is None or reply.completion_tokens is None,
            finish_reason=reply.finish_reason,
            first_token_ms=timing.first_token_ms,
            response_model=reply.response_model,
            response_id=reply.response_id,
        )

    def _generate(
        self,
        request: LLMRequest,
        settings: ModelSettings,
        timing: _Timing,
        scope: TaskClient | None,
    ) -> Awaitable[ProviderReply]:
        """The provider's reply; streamed to the round's watcher (`scope.stream`) when the
        request is the final answer, someone watches and the provider can stream."""
        on_delta = scope.stream if request.streams and scope is not None else None
        if on_delta is None or not isinstance(self.provider, StreamingProvider):
            return self.provider.generate(request, settings)
        return self.provider.stream(request, settings, timing.passing_to(on_delta))

    def _cached(self, request: LLMRequest, settings: ModelSettings) -> _Answer | None:
        if self.cache is None:
            return None
        key = cache_key(self.provider.name, settings, request.prompt, request.schema)
        hit = self.cache.get(key)
        if hit is None:
            return None
        return _Answer(hit.text, hit.prompt_tokens, hit.completion_tokens, cached=True)

    def _limit(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        if loop not in self._limits:
            self._limits[loop] = asyncio.Semaphore(max(1, self.config.concurrency))
        return self._limits[loop]

    def _model(self, settings: ModelSettings) -> str:
        return settings.model or self.provider.name

    def _record(
        self,
        scope: TaskClient | None,
        request: LLMRequest,
        settings: ModelSettings,
        answer: _Answer,
        timing: _Timing,
        attempt: int,
        *,
        cached: bool = False,
    ) -> int:
        return self._add(
            scope,
            CallRecord(
                purpose=request.purpose.value,
                tool=request.tool,
                task=None if scope is None else scope.task,
                provider=self.provider.name,
                model=self._model(settings),
                latency_ms=0.0 if cached else round(timing.call_ms(), 3),
                queue_ms=round(timing.queue_ms, 3),
                prompt_tokens=answer.prompt_tokens,
                completion_tokens=answer.completion_tokens,
                cached=answer.cached,
                attempt=attempt,
                outcome="ok",
                tokens_estimated=answer.estimated,
                structured=settings.structured,
                prompt_cut=request.cut,
                finish_reason=answer.finish_reason,
                first_token_ms=answer.first_token_ms,
                exchange=exchange(request.prompt, answer.text),
                response_model=answer.response_model,
                response_id=answer.response_id,
                output_type=request.output_type,
                **({} if answer.cached else self._sent(request, settings)),  # a cache hit: none
            ),
        )

    def _record_error(
        self,
        scope: TaskClient | None,
        request: LLMRequest,
        settings: ModelSettings,
        timing: _Timing,
        attempt: int,
        error: BaseException,
        notice: str | None = None,
    ) -> None:
        self._add(
            scope,
            CallRecord(
                purpose=request.purpose.value,
                tool=request.tool,
                task=None if scope is None else scope.task,
                provider=self.provider.name,
                model=self._model(settings),
                latency_ms=round(timing.call_ms(), 3),
                queue_ms=round(timing.queue_ms, 3),
                prompt_tokens=0,
                completion_tokens=0,
                cached=False,
                attempt=attempt,
                outcome="error",
                error=describe_error(error),
                structured=settings.structured,
                notice=notice,
                prompt_cut=request.cut,
                exchange=exchange(request.prompt, None),
                output_type=request.output_type,
                **self._sent(request, settings),
            ),
        )

    def _sent(self, request: LLMRequest, settings: ModelSettings) -> dict[str, Any]:
        """What a call asked of a model server and where it went; nothing for a provider that
        runs here (offline, scripted, replay: no server, no sampling)."""
        where = model_server(self.provider.name, self.config.api_base)
        if where is None:
            return {}
        return {
            "temperature": settings.temperature,
            "max_tokens": settings.max_tokens,
            "server_address": where[0],
            "server_port": where[1],
        }

    def _add(self, scope: TaskClient | None, record: CallRecord) -> int:
        """Adds a record where `scope` says; returns its index (so its outcome can be amended:
        `_mark`)."""
        records = self._accounting.calls if scope is None else scope.calls
        records.append(record)
        return len(records) - 1

    @staticmethod
    def _mark(records: list[CallRecord], record: int, **changes: Any) -> None:
        records[record] = dataclasses.replace(records[record], **changes)

    def _call_error(self, request: LLMRequest, error: Exception, attempts: int) -> LLMCallError:
        transient = is_transient(error)
        why = f"gave up after {attempts} attempt(s)" if transient else "not retried"
        if is_broken_body(error):
            hint = (
                "the server answered with a body that is not JSON (an overloaded server or a "
                "proxy's error page); nothing in the pipeline is wrong: try again later"
            )
        elif transient:
            hint = (
                "check that the server is up and `llm.api_base` is right, or raise `llm.timeout_s`"
            )
        else:
            hint = "check `llm.model`, `llm.api_base` and the key variable `llm.api_key_env`"
        return LLMCallError(
            f"{self.provider.name} call for purpose {request.purpose.value}{_for_tool(request)} "
            f"failed ({why}): {describe_error(error)}; {hint}",
            purpose=request.purpose.value,
            tool=request.tool,
            attempts=attempts,
        )


def _or_estimate(reported: int | None, text: str) -> int:
    return reported if reported is not None else estimate_tokens(text)


def _for_tool(request: LLMRequest) -> str:
    return f" for tool {request.tool}" if request.tool else ""
