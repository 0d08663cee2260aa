"""What the service's log is told when something fails that nobody expected.

A client reads one line (the round's `error`, or the CLI's message in a 500); the operator needs
the traceback. A round an unexpected exception ended, and an exception that escaped the service
itself, are logged (logger `runner.service`) with their traceback, redacted as everything that
leaves the service is (runner.text.redact: no credential, the service's folders by name). An
error runner expects (a provider that cannot be reached, a scripted LLM with no rule: its message
says what to do) is one warning line, without a traceback.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from runner.text.redact import ERRORS, Redactor

log = logging.getLogger("runner.service")


class EndedRound(Protocol):
    """What the log reads of a round's result (runner.app's RoundResult)."""

    session: str
    round: int
    outcome: str
    error: str | None
    exception: Exception | None

    @property
    def trace(self) -> Any: ...  # its `events`: the trace's events


def log_round_error(domain: str, result: EndedRound, redactor: Redactor = ERRORS) -> None:
    """A round that ended with an error: its message, and the traceback its trace recorded
    when the exception was not one runner expects."""
    from runner.render import is_expected

    if result.outcome != "error":
        return
    where = f"round {result.round} of session {result.session} on {domain!r}"
    error = redactor.text(result.error or "")
    exception = result.exception
    if exception is None or is_expected(exception):
        log.warning("%s ended with an error: %s", where, error)
        return
    events: Sequence[Mapping[str, Any]] = result.trace.events if result.trace is not None else []
    recorded = [e["traceback"] for e in events if e["event"] == "round.end" and "traceback" in e]
    shown = redactor.text(recorded[-1] if recorded else _formatted(exception)).rstrip()
    log.error("%s ended with an error: %s\n%s", where, error, shown)


def log_unexpected(what: str, exc: BaseException, redactor: Redactor = ERRORS) -> None:
    """An exception that escaped the service while it did `what`, with its traceback; nothing
    for an error runner expects (the client is told its message)."""
    from runner.render import is_expected
    from runner.service.errors import ServiceError

    if isinstance(exc, ServiceError) or is_expected(exc):
        return
    log.error("%s failed: %s", what, redactor.text(_formatted(exc)).rstrip())


def _formatted(exc: BaseException) -> str:
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
