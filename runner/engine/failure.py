"""What an unexpected exception in a round leaves behind: a short message that names where it
happened (the tool, the coordinator, the LLM purpose) and its traceback for the trace.

A round never lets an exception out: a tool's or a coordinator's failure is a warning and the
round goes on (C10, execution.py); anything else ends the round with an error (round.py). Either
way the user reads one line, and the traceback goes to the trace's error event (`traceback`),
which `runner run --debug` prints and `runner serve` logs. Credentials are hidden in it here,
where it is made (runner.text.credentials): a provider's error can echo its key.
"""

from __future__ import annotations

import traceback

# A trace keeps this much of a traceback at most: its end, where the exception was raised.
MAX_TRACEBACK_CHARS = 20_000


class StepFailed(Exception):
    """An exception in a step of the round that is no tool's (an LLM purpose the engine asks
    itself, the gatekeeper's rule): the step's name and the exception it raised."""

    def __init__(self, step: str, cause: Exception) -> None:
        super().__init__(f"{step} failed: {described(cause)}")
        self.step = step
        self.cause = cause


def described(exc: BaseException) -> str:
    """The exception in one line: its type and its message."""
    return f"{type(exc).__name__}: {exc}"


def traceback_text(exc: BaseException) -> str:
    """The exception's traceback as Python prints it, credentials hidden, its end kept."""
    # imported by the first traceback (its patterns cost about 1.5 ms to compile): a round that
    # fails nowhere never loads it
    from runner.text.credentials import hide_credentials

    text = hide_credentials("".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))
    if len(text) <= MAX_TRACEBACK_CHARS:
        return text
    return "…\n" + text[-MAX_TRACEBACK_CHARS:]
