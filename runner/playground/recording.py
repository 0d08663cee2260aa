"""The replies of a real model, recorded while the playground runs a round, so that the
conversation can be kept as a test that needs no model (its replies become the case's script).

The runtime's provider is wrapped once; a round the playground runs sets a context-local list,
and every reply the provider gives while that round runs (in its task, or in the tasks and
threads it starts, which copy the context) is added to it. Rounds that other clients of the
service run are not recorded, and cost nothing but one lookup per call.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from runner.playground.keep import REPRODUCIBLE, RecordedReply

if TYPE_CHECKING:
    from runner.app import Runtime

# The replies of the round being recorded. A context variable because the wrapped provider is
# called by the LLM client (`provider.generate(request, settings)`), which is shared by every
# round of the runtime and hands the provider nothing of the round.
_CURRENT: ContextVar[list[RecordedReply] | None] = ContextVar("playground_replies", default=None)
# Rounds whose replies are kept, per worker: the oldest are forgotten first.
MAX_ROUNDS = 2_000


class RecordingProvider:
    """A provider that hands every reply on and, inside `recording()`, also keeps it."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = inner.name
        self.cacheable = getattr(inner, "cacheable", True)

    def prepare(self, settings: Any) -> None:
        self.inner.prepare(settings)

    async def generate(self, request: Any, settings: Any) -> Any:
        return self._kept(request, await self.inner.generate(request, settings))

    async def stream(self, request: Any, settings: Any, on_delta: Any) -> Any:
        """The final answer as the model writes it (a provider that cannot stream: whole)."""
        stream = getattr(self.inner, "stream", None)
        if stream is None:
            return await self.generate(request, settings)
        return self._kept(request, await stream(request, settings, on_delta))

    def _kept(self, request: Any, reply: Any) -> Any:
        replies = _CURRENT.get()
        if replies is not None:
            replies.append(
                RecordedReply(request.purpose.value, request.tool, request.subject, reply.text)
            )
        return reply

    def __getattr__(self, name: str) -> Any:  # the wrapped provider's other attributes
        return getattr(self.inner, name)


def provider_name(runtime: Runtime) -> str:
    provider = runtime.client.provider
    return str(getattr(provider, "inner", provider).name)


def install(runtime: Runtime) -> bool:
    """Wrap the runtime's provider when its replies need recording (a real model); True when
    its rounds are recorded."""
    if provider_name(runtime) in REPRODUCIBLE:
        return False
    if not isinstance(runtime.client.provider, RecordingProvider):
        runtime.client.provider = RecordingProvider(runtime.client.provider)
    return True


@contextmanager
def recording() -> Iterator[list[RecordedReply]]:
    """The replies given while the block runs, in the order they came."""
    replies: list[RecordedReply] = []
    token = _CURRENT.set(replies)
    try:
        yield replies
    finally:
        _CURRENT.reset(token)


class ReplyLog:
    """The recorded replies of the rounds the playground ran, by session and round."""

    def __init__(self, limit: int = MAX_ROUNDS) -> None:
        self.limit = limit
        self._rounds: OrderedDict[tuple[str, int], list[RecordedReply]] = OrderedDict()

    def add(self, session: str, number: int, replies: list[RecordedReply]) -> None:
        self._rounds[(session, number)] = replies
        self._rounds.move_to_end((session, number))
        while len(self._rounds) > self.limit:
            self._rounds.popitem(last=False)

    def get(self, session: str, number: int) -> list[RecordedReply] | None:
        return self._rounds.get((session, number))
