"""The one LLM client of a run: retries, timeouts, a concurrency limit, structured replies, the
optional response cache, recording, and accounting — the same for every provider.

Policy for one request:
- each provider attempt runs under the per-client concurrency limit and `timeout_s`;
- transient failures (connection errors, timeouts, HTTP 429 and 5xx) are retried up to
  `max_retries` times with exponential backoff and jitter; other errors (HTTP 4xx…) are not;
- with a reply schema, an invalid reply is asked again `structured_retries` times with the
  validation error appended to the prompt, then fails with LLMReplyError.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
import time
import weakref
from typing import Any

from runner.config.model import LLMConfig, ModelSettings
from runner.llm import structured
from runner.llm.accounting import Accounting, CallRecord
from runner.llm.cache import CachedReply, ResponseCache, cache_key
from runner.llm.cassette import Entry, Recorder
from runner.llm.errors import LLMCallError, LLMError, LLMReplyError
from runner.llm.providers.base import Provider
from runner.llm.settings import model_settings
from runner.llm.types import LLMReply, LLMRequest
from runner.text import estimate_tokens

# Exception class names (anywhere in the MRO) that mean "try again": openai's connection and
# timeout errors, httpx's transport errors. Matched by name so we never import those packages.
_TRANSIENT_NAMES = frozenset(
    {"APIConnectionError", "APITimeoutError", "TransportError", "TimeoutException"}
)


def is_transient(error: BaseException) -> bool:
    status = getattr(error, "status_code", None)
    if isinstance(status, int):
        return status in (408, 409, 429) or status >= 500
    if isinstance(error, (asyncio.TimeoutError, TimeoutError, ConnectionError)):
        return True
    return any(cls.__name__ in _TRANSIENT_NAMES for cls in type(error).__mro__)


@dataclasses.dataclass(frozen=True)
class _Answer:
    text: str
    prompt_tokens: int
    completion_tokens: int
    cached: bool
    estimated: bool = False  # the provider reported no usage; counts are estimates


class Client:
    """Implements `LLMClient`. `.stats` totals by purpose; `.calls` feeds `llm.call` events."""

    def __init__(
        self,
        provider: Provider,
        config: LLMConfig,
        *,
        cache: ResponseCache | None = None,
        recorder: Recorder | None = None,
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
        self._accounting = Accounting()
        self._limits: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary()
        )

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

    async def complete(self, request: LLMRequest) -> LLMReply:
        settings = model_settings(self.config, request.purpose)
        started = time.perf_counter()
        rounds = 1 + (self.config.structured_retries if request.schema is not None else 0)
        prompt, attempts = request.prompt, 0
        last_error, last_text = structured.InvalidReply("no reply"), ""
        for _ in range(rounds):
            asked = dataclasses.replace(request, prompt=prompt)
            answer, attempts, record = await self._answer(asked, settings, attempts)
            if request.schema is None:
                return self._accept(asked, settings, answer, None, attempts, started)
            try:
                data = structured.parse(answer.text, request.schema)
            except structured.InvalidReply as error:
                self._mark_invalid(record, str(error))
                prompt = request.prompt + structured.correction(error, request.schema)
                last_error, last_text = error, answer.text
                continue
            return self._accept(asked, settings, answer, data, attempts, started)
        raise LLMReplyError(
            f"the {request.purpose.value} reply{_for_tool(request)} was not usable after "
            f"{rounds} attempt(s): {last_error}. Reply was: {_excerpt(last_text)}",
            purpose=request.purpose.value,
            tool=request.tool,
            reply=last_text,
        )

    def _accept(
        self,
        request: LLMRequest,
        settings: ModelSettings,
        answer: _Answer,
        data: Any,
        attempts: int,
        started: float,
    ) -> LLMReply:
        if self.cache is not None and not answer.cached:
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
        self, request: LLMRequest, settings: ModelSettings, attempts: int
    ) -> tuple[_Answer, int, int]:
        """One reply text, from the cache or the provider (retrying transient errors), the
        attempts so far, and the index of its call record."""
        cached = self._cached(request, settings)
        if cached is not None:
            record = self._record(request, settings, cached, 0.0, attempts + 1)
            self._add_to_cassette(request, cached)
            return cached, attempts + 1, record
        for retry in range(self.config.max_retries + 1):
            attempts += 1
            started = time.perf_counter()
            try:
                self.provider.prepare(settings)
                started = time.perf_counter()  # latency is the call's, not the start-up's
                answer = await self._attempt(request, settings)
            except Exception as error:
                latency = (time.perf_counter() - started) * 1000
                self._record_error(request, settings, latency, attempts, error)
                if isinstance(error, LLMError):
                    raise
                if not is_transient(error) or retry == self.config.max_retries:
                    raise self._call_error(request, error, attempts) from error
                delay = backoff_delay(retry, self.backoff_base_s, self.backoff_max_s, self._random)
                await asyncio.sleep(delay)
                continue
            latency = (time.perf_counter() - started) * 1000
            record = self._record(request, settings, answer, latency, attempts)
            self._add_to_cassette(request, answer)
            return answer, attempts, record
        raise AssertionError("unreachable: the loop returns or raises")

    def _add_to_cassette(self, request: LLMRequest, answer: _Answer) -> None:
        """Every answered prompt, cached or not, so that a replay meets each one."""
        if self.recorder is not None:
            self.recorder.add(
                Entry(request.purpose.value, request.tool, request.prompt, answer.text)
            )

    async def _attempt(self, request: LLMRequest, settings: ModelSettings) -> _Answer:
        async with self._limit():
            reply = await asyncio.wait_for(
                self.provider.generate(request, settings), self.config.timeout_s
            )
        return _Answer(
            text=reply.text,
            prompt_tokens=_or_estimate(reply.prompt_tokens, request.prompt),
            completion_tokens=_or_estimate(reply.completion_tokens, reply.text),
            cached=False,
            estimated=reply.prompt_tokens is None or reply.completion_tokens is None,
        )

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
        request: LLMRequest,
        settings: ModelSettings,
        answer: _Answer,
        latency_ms: float,
        attempt: int,
    ) -> int:
        return self._accounting.add(
            CallRecord(
                purpose=request.purpose.value,
                tool=request.tool,
                provider=self.provider.name,
                model=self._model(settings),
                latency_ms=round(latency_ms, 3),
                prompt_tokens=answer.prompt_tokens,
                completion_tokens=answer.completion_tokens,
                cached=answer.cached,
                attempt=attempt,
                outcome="ok",
                tokens_estimated=answer.estimated,
            )
        )

    def _record_error(
        self,
        request: LLMRequest,
        settings: ModelSettings,
        latency_ms: float,
        attempt: int,
        error: BaseException,
    ) -> None:
        self._accounting.add(
            CallRecord(
                purpose=request.purpose.value,
                tool=request.tool,
                provider=self.provider.name,
                model=self._model(settings),
                latency_ms=round(latency_ms, 3),
                prompt_tokens=0,
                completion_tokens=0,
                cached=False,
                attempt=attempt,
                outcome="error",
                error=_describe(error),
            )
        )

    def _mark_invalid(self, record: int, message: str) -> None:
        """That call's reply failed validation."""
        calls = self._accounting.calls
        calls[record] = dataclasses.replace(calls[record], outcome="invalid", error=message)

    def _call_error(self, request: LLMRequest, error: Exception, attempts: int) -> LLMCallError:
        transient = is_transient(error)
        why = f"gave up after {attempts} attempt(s)" if transient else "not retried"
        hint = (
            "check that the server is up and `llm.api_base` is right, or raise `llm.timeout_s`"
            if transient
            else "check `llm.model`, `llm.api_base` and the key variable `llm.api_key_env`"
        )
        return LLMCallError(
            f"{self.provider.name} call for purpose {request.purpose.value}{_for_tool(request)} "
            f"failed ({why}): {_describe(error)}; {hint}",
            purpose=request.purpose.value,
            tool=request.tool,
            attempts=attempts,
        )


def backoff_delay(retry: int, base_s: float, max_s: float, rng: random.Random) -> float:
    """Exponential (base, 2×base, 4×base…, capped at max_s), times a random factor in
    [0.5, 1] so that many clients' retries do not move in step."""
    return min(max_s, base_s * (2**retry)) * rng.uniform(0.5, 1.0)


def _or_estimate(reported: int | None, text: str) -> int:
    return reported if reported is not None else estimate_tokens(text)


def _for_tool(request: LLMRequest) -> str:
    return f" for tool {request.tool}" if request.tool else ""


def _describe(error: BaseException) -> str:
    if isinstance(error, (asyncio.TimeoutError, TimeoutError)) and not str(error):
        return "timed out"
    return f"{type(error).__name__}: {error}"


def _excerpt(text: str, limit: int = 300) -> str:
    flat = text.strip()
    return repr(flat if len(flat) <= limit else flat[:limit] + "…")
