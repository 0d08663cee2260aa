"""`TaskClient`: the shared LLM client as one step of one round sees it.

A runtime has one LLM client (its retries, cache, concurrency limit and structured-mode
fallbacks are shared by every round of every session). What differs per call is handed to the
client with the call, in one frozen object: the round's list of call records (its trace's
`llm.call` events and its stats), the task the call is made for, and where the text of the
final answer goes while the model writes it (`runner.llm.streaming`). The engine makes one for
each tool run and each purpose it asks (`runner.engine.context.RoundContext.env`), so a tool
that calls `env.llm.complete(...)` or `env.prompts.<purpose>(...)` — the plugin interface,
which names no round — has its calls charged to its round and task, also when the subtasks of
a parallel group run concurrently.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from runner.llm.accounting import Accounting
from runner.llm.streaming import AnswerStream, Deltas
from runner.llm.types import LLMClient, LLMReply, LLMRequest

if TYPE_CHECKING:
    from collections.abc import Callable


@dataclass(frozen=True, slots=True)
class TaskClient:
    """Implements `LLMClient`: `shared`'s calls, recorded in `calls` for `task` (None: for no
    task), a streamed reply's text sent to `stream` (None: nobody watches)."""

    shared: LLMClient
    calls: list[Any]  # the round's call records (runner.llm.accounting.CallRecord)
    task: str | None = None
    stream: Deltas | None = None

    async def complete(self, request: LLMRequest) -> LLMReply:
        # runner's client records the call where this says (ProviderClient.complete_for)
        complete_for = getattr(self.shared, "complete_for", None)
        if complete_for is None:  # a client that keeps its own records (a test's)
            return await self.shared.complete(request)
        reply: LLMReply = await complete_for(request, self)
        return reply

    def for_task(self, task: str | None) -> TaskClient:
        """The same round's client, its calls made for `task`."""
        return TaskClient(self.shared, self.calls, task, self.stream)

    def streaming_to(self, stream: Deltas | None) -> TaskClient:
        return TaskClient(self.shared, self.calls, self.task, stream)

    @property
    def stats(self) -> dict[str, Any]:
        """The totals of the calls in `calls` (runner.llm.accounting.Accounting.stats)."""
        return Accounting(self.calls).stats()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name in TaskClient.__slots__:
            raise AttributeError(name)  # (a copy's lookups before its fields are set)
        # what else a caller reads of the client (`config`, `context_window`, `provider`,
        # `notices`) is the shared client's
        return getattr(self.shared, name)


def round_client(
    shared: LLMClient, stream: Deltas | None = None, calls: list[Any] | None = None
) -> TaskClient:
    """The client of one round: its call records go to `calls` — a face gives each round a
    list of its own, as a service runs many rounds at once on one client and each round's trace
    and stats count its own calls only — else to the shared client's own list (its `calls`:
    the records of a client used directly, as tests do), else to a new list."""
    if calls is None:
        own = getattr(shared, "calls", None)
        calls = own if isinstance(own, list) else []
    return TaskClient(shared, calls, None, stream)


@contextmanager
def answer_written(
    client: LLMClient, rewrite: Callable[[str], str] | None = None
) -> Iterator[LLMClient]:
    """The client to write the round's answer with: a streamed reply goes to the round's
    watcher (if any) as the round will return it — stripped, and through `rewrite` — its last
    piece when the block ends."""
    outer = client.stream if isinstance(client, TaskClient) else None
    if outer is None:
        yield client
        return
    assert isinstance(client, TaskClient)
    stream = AnswerStream(outer, rewrite)
    yield client.streaming_to(stream)
    stream.close()
