"""The errors of the LLM layer. Each message names what failed and how to fix it."""

from __future__ import annotations

import asyncio


class LLMError(Exception):
    """Base class: something about an LLM call went wrong."""


class LLMConfigError(LLMError):
    """The `llm` settings cannot work (unknown provider, missing model, missing key variable…)."""


class LLMCallError(LLMError):
    """A provider call failed for good: a non-transient error, or retries ran out."""

    def __init__(self, message: str, *, purpose: str, tool: str | None, attempts: int) -> None:
        super().__init__(message)
        self.purpose = purpose
        self.tool = tool
        self.attempts = attempts


class LLMReplyError(LLMError):
    """A structured reply stayed invalid after every retry."""

    def __init__(self, message: str, *, purpose: str, tool: str | None, reply: str) -> None:
        super().__init__(message)
        self.purpose = purpose
        self.tool = tool
        self.reply = reply


class NoModelError(LLMError):
    """No model answers this request: the offline provider was asked for a prompt tool's reply
    with nothing to answer from but the tool's own prompt, which it never passes off as one."""


class ScriptError(LLMConfigError):
    """A scripted-provider rule file is malformed."""


class ScriptMissError(LLMError):
    """The scripted provider has no rule for a request (and no `fallback: offline`)."""


class CassetteError(LLMConfigError):
    """A replay cassette is missing or malformed."""


class CassetteMissError(LLMError):
    """The replay cassette holds no reply for a prompt; the message carries a diff."""


def describe_error(error: BaseException) -> str:
    """An exception as a message names it: its type and text (`timed out` for a bare timeout,
    which says nothing by itself)."""
    if isinstance(error, (asyncio.TimeoutError, TimeoutError)) and not str(error):
        return "timed out"
    return f"{type(error).__name__}: {error}"
