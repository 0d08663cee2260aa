"""Rounds watched from outside runner: each finished round handed to observers (OpenTelemetry).

The application layer tells `round_finished` of every round it ran; observers are added by
`add_observer`, or from the standard `OTEL_*` environment by `runner.observability.environment`
(the faces call it at start). With no observer a round costs one test of an empty list: nothing
of OpenTelemetry is imported, and nothing is worked out.

An observer derives what it reports from the round's own trace (runner.trace): the events
already say which task ran which coordinator, tool, retrieval and LLM call, and why, so the
engine knows nothing of observers. A service that received a W3C `traceparent` makes the round
a child of the caller's trace by running it `within_trace(headers)`.

The trace keeps no prompt text. An observer added with `content=True` (the user opted in to
content capture) is also handed the prompt and reply of each LLM call (`exchanges`), which the
round keeps for it in process only (runner.llm.exchanges says why): when no observer asks, no
round keeps them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from runner.llm.exchanges import Exchange


@dataclass(frozen=True)
class FinishedRound:
    """A round as observers see it, once it ended."""

    workflow: str  # the pipeline's domain
    began_ns: int  # wall clock (ns since the epoch) when the round's trace began
    events: Sequence[Mapping[str, Any]]  # the round's trace events, `ms` counted from began_ns
    result: Mapping[str, Any]  # as `runner run --json` prints it
    # the prompt and reply of each `llm.call` event of `events`, in the same order, when an
    # observer asked for content (None: that call's were not kept); else empty
    exchanges: Sequence[Exchange | None] = ()
    provider: str | None = None  # the LLM provider the round's client calls (gen_ai.provider.name)


RoundObserver = Callable[[FinishedRound], None]

_observers: list[RoundObserver] = []
_wanting_content: list[RoundObserver] = []  # those of them handed the calls' prompts and replies

# The W3C trace context headers (`traceparent`, `tracestate`) of the request a round answers. A
# context variable because an ASGI middleware sets it (runner/serve/tracecontext.py): the ASGI
# interface hands the application nothing but the scope, and the round that answers the request
# is started far below, in the service; the asyncio task that runs it copies the context.
_CARRIER: ContextVar[Mapping[str, str] | None] = ContextVar("runner_trace_carrier", default=None)
PROPAGATED_HEADERS = ("traceparent", "tracestate")


def add_observer(observer: RoundObserver, *, content: bool = False) -> None:
    """`content`: the observer wants each LLM call's prompt and reply (`exchanges`), which
    rounds then keep; say it only when the user opted in to content capture."""
    from runner.llm.exchanges import keep_exchanges

    _observers.append(observer)
    if content:
        _wanting_content.append(observer)
    keep_exchanges(bool(_wanting_content))


def remove_observer(observer: RoundObserver) -> None:
    from runner.llm.exchanges import keep_exchanges

    for kept in (_observers, _wanting_content):
        if observer in kept:
            kept.remove(observer)
    keep_exchanges(bool(_wanting_content))


def observed() -> bool:
    """Whether anyone observes rounds (when not, the caller builds no `FinishedRound`)."""
    return bool(_observers)


def wants_content() -> bool:
    """Whether a round should keep its LLM calls' prompts and replies for an observer."""
    return bool(_wanting_content)


def round_finished(finished: FinishedRound) -> None:
    """Tell every observer. An observer that fails never fails the round: it is said on
    stderr, once per kind of failure."""
    for observer in list(_observers):
        try:
            observer(finished)
        except Exception as error:
            _report(error)


_reported: set[str] = set()


def _report(error: Exception) -> None:
    import sys

    kind = type(error).__name__
    if kind not in _reported:
        _reported.add(kind)
        print(f"warning: a round observer failed ({kind}: {error})", file=sys.stderr)


@contextmanager
def within_trace(headers: Mapping[str, str]) -> Iterator[None]:
    """Rounds run within the block (and in the asyncio tasks it starts) belong to the trace
    the W3C headers name, when they name one."""
    carrier = {name: headers[name] for name in PROPAGATED_HEADERS if headers.get(name)}
    token = _CARRIER.set(carrier or None)
    try:
        yield
    finally:
        _CARRIER.reset(token)


def trace_carrier() -> Mapping[str, str] | None:
    """The trace context headers of the request the running round answers, if any."""
    return _CARRIER.get()
