"""The typed, immutable form of a test-case file (`schemas/testcase.schema.json`).

`runner.testing.loader` builds these from a file that passed the schema; the executor and the
expectation checks read only these. Every case and turn keeps the line it was written on, so
that a failure can point at it (`file:line`, GitHub annotations, JUnit).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from runner.config.model import ScriptRule


@dataclass(frozen=True)
class LLMSpec:
    """Where a case's LLM replies come from; a case's spec is merged over its file's."""

    provider: str | None = None  # offline | scripted | replay; None: from the rules / cassette
    script: tuple[ScriptRule, ...] = ()  # inline rules first, then those of `script_file`
    fallback: str | None = None
    cassette: Path | None = None

    def then(self, later: LLMSpec) -> LLMSpec:
        """This spec (a case's) first, `later` (its file's) filling what it leaves open; rules
        are tried in that order too. The case's own LLM wins: its rules make it scripted and
        its cassette replayed even when the file names another provider (a file's `provider:
        offline` then answers what the case's rules do not: docs/testing.md)."""
        mine = self.provider or self.implied_provider
        fallback = self.fallback or later.fallback
        if mine == "scripted" and fallback is None and later.provider == "offline":
            fallback = "offline"
        return LLMSpec(
            provider=mine or later.provider,
            script=self.script + later.script,
            fallback=fallback,
            cassette=self.cassette or later.cassette,
        )

    @property
    def implied_provider(self) -> str | None:
        """The provider the keys say without naming it: rules are scripted, a cassette replay."""
        if self.script or self.fallback:
            return "scripted"
        if self.cassette is not None:
            return "replay"
        return None

    @property
    def is_empty(self) -> bool:
        return self == LLMSpec()


@dataclass(frozen=True)
class TextExpect:
    """Checks on a text: everything in `contains` (case-insensitive), nothing in
    `not_contains`, and `matches` searched as a regular expression."""

    contains: tuple[str, ...] = ()
    not_contains: tuple[str, ...] = ()
    matches: str | None = None


@dataclass(frozen=True)
class SourceExpect:
    """A source the answer must cite: a document and, when given, the page and/or the heading of
    the section the page is in. A heading survives re-paging (a changed `max_words` renumbers
    pages, not sections), which is why a kept case pins the heading and not the page."""

    document: str  # the document's corpus path, or the end of it
    page: int | None = None
    heading: str | None = None

    def __str__(self) -> str:
        where = self.document if self.heading is None else f"{self.document} § {self.heading}"
        return where if self.page is None else f"{where} p. {self.page}"


@dataclass(frozen=True)
class RetrievedExpect:
    """A page a retrieval must have returned: `document` (or the end of its path), optionally
    `page`, among the first `top` pages of a run of `tool` (any rank when `top` is None)."""

    tool: str
    document: str
    page: int | None = None
    top: int | None = None

    def __str__(self) -> str:
        where = self.document if self.page is None else f"{self.document} p. {self.page}"
        within = f"in the top {self.top}" if self.top is not None else "among its pages"
        return f"{where} {within} of {self.tool}"


@dataclass(frozen=True)
class CallBound:
    """LLM calls of one purpose (or `total`): exact, or between `min` and `max`."""

    exact: int | None = None
    min: int | None = None
    max: int | None = None

    def admits(self, calls: int) -> bool:
        if self.exact is not None:
            return calls == self.exact
        return (self.min is None or calls >= self.min) and (self.max is None or calls <= self.max)

    def __str__(self) -> str:
        if self.exact is not None:
            return f"exactly {self.exact}"
        bounds = []
        if self.min is not None:
            bounds.append(f"at least {self.min}")
        if self.max is not None:
            bounds.append(f"at most {self.max}")
        return " and ".join(bounds)


@dataclass(frozen=True)
class Expect:
    outcome: str | None = None
    answer: TextExpect | None = None
    question: TextExpect | None = None
    error: TextExpect | None = None
    sources: tuple[SourceExpect, ...] = ()
    no_sources: bool = False
    # True: the round must be degraded; False: must not be; None: a degraded round fails the
    # turn unless its outcome is an error (a failed part is never silent in a test either)
    degraded: bool | None = None
    ran: tuple[str, ...] = ()
    not_ran: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()
    not_skipped: tuple[str, ...] = ()
    llm_calls: tuple[tuple[str, CallBound], ...] = ()  # (purpose or "total", bound)
    retrieved: tuple[RetrievedExpect, ...] = ()


@dataclass(frozen=True)
class Turn:
    text: str
    is_answer: bool  # True: the answer to the pending clarifying question
    expect: Expect
    line: int

    @property
    def label(self) -> str:
        kind = "answer" if self.is_answer else "message"
        shown = self.text if len(self.text) <= 60 else self.text[:59] + "…"
        return f"{kind} {shown!r}"


@dataclass(frozen=True)
class Case:
    name: str
    turns: tuple[Turn, ...]
    llm: LLMSpec
    line: int
    description: str = ""


@dataclass(frozen=True)
class CaseFile:
    path: Path
    pipeline: Path
    cases: tuple[Case, ...] = field(default_factory=tuple)
    description: str = ""
