"""The one rule for the regular expressions a pipeline author writes: an activation `pattern`, a
prompt type's `pattern`, and a scripted rule's `task` / `prompt` (in `llm.script`,
`llm.script_file` and test cases).

They are Python regular expressions, *searched* (not matched) in the text and case-insensitive:
`pattern: warranty` matches "Warranty". A part that must keep its case says so with
`(?-i:...)`, e.g. `(?-i:KD)-\\d+`. Everything that compiles such a pattern — the engine, the
scripted provider and `runner validate` — goes through `compile_pattern`, so they cannot
disagree. (A test case's `matches:` expectation is an assertion, not a pattern of the pipeline:
it keeps Python's default, case-sensitive; see docs/testing.md — and goes through `search_text`.)

Every search runs with a time limit (`MATCH_TIMEOUT_S`), on the `regex` engine, which takes a
timeout and lets other threads run while it matches: a pattern that backtracks without end
(`(?s).*.*.*.*!`, `(a+)+$`) fails its round, or its test, with PatternTimeoutError instead of
holding the process. Patterns are checked with Python's `re` first, so what compiles is what
`re` accepts and a bad one raises `re.error`, as before.
"""

from __future__ import annotations

import re
import warnings
from functools import cache
from typing import Any

try:  # the parser re.compile uses (what warns), without re's cache in front of it
    from re import _parser as _regex_parser  # type: ignore[attr-defined]  # private, no stub
except ImportError:  # pragma: no cover  (Python 3.10)
    import sre_parse as _regex_parser

PATTERN_FLAGS = re.IGNORECASE
MATCH_TIMEOUT_S = 1.0  # one search; an author's pattern on a page takes microseconds


class PatternTimeoutError(ValueError):
    """A pattern took longer than MATCH_TIMEOUT_S on one text; the message names it."""


class TimedPattern:
    """A compiled pattern whose searches stop after MATCH_TIMEOUT_S."""

    __slots__ = ("_compiled", "pattern")

    def __init__(self, pattern: str, flags: int) -> None:
        self.pattern = pattern
        # re says what is valid (and raises re.error); regex matches, with a time limit
        re.compile(pattern, flags)
        # imported on the first pattern compiled (about 7 ms): the engine imports this module,
        # and a pipeline without patterns (a `runner run` of a retrieval tool) never needs it
        import regex

        try:
            self._compiled = regex.compile(pattern, _regex_flags(flags))
        except regex.error as error:  # pragma: no cover  (re accepted it)
            raise re.error(str(error)) from None

    def search(self, text: str) -> Any:
        """The first match in `text` (a `regex` match object), or None."""
        try:
            return self._compiled.search(text, timeout=MATCH_TIMEOUT_S)
        except TimeoutError:
            raise PatternTimeoutError(
                f"the regular expression `{self.pattern[:80]}` took more than "
                f"{MATCH_TIMEOUT_S:g} s on a text of {len(text):,} characters and was stopped: "
                "simplify it (repetitions inside repetitions, such as `(a+)+` or `.*.*`, "
                "try every way to split the text)"
            ) from None


def _regex_flags(flags: int) -> int:
    import regex  # as TimedPattern's

    chosen = regex.VERSION0  # re's semantics
    for re_flag, regex_flag in (
        (re.IGNORECASE, regex.IGNORECASE),
        (re.DOTALL, regex.DOTALL),
        (re.MULTILINE, regex.MULTILINE),
    ):
        if flags & re_flag:
            chosen |= regex_flag
    return chosen


@cache
def compile_pattern(pattern: str) -> TimedPattern:
    """An author's pattern, compiled once with PATTERN_FLAGS. Raises re.error. Python's own
    warnings about it (a FutureWarning for `[[`) are `runner validate`'s to report (R127),
    never printed at run time with a path into runner's source."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return TimedPattern(pattern, PATTERN_FLAGS)


@cache
def _assertion(pattern: str) -> TimedPattern:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return TimedPattern(pattern, 0)


def search_text(pattern: str, text: str) -> bool:
    """Whether a test's `matches:` pattern (case-sensitive, as Python's default) is found in
    `text`, within the time limit (PatternTimeoutError past it)."""
    return _assertion(pattern).search(text) is not None


def pattern_doubt(pattern: str) -> str | None:
    """What Python warns about a pattern that compiles (`Possible nested set at position 1`:
    a later Python may read `[[`, `--`, `&&`, `~~` or `||` in a set differently), or None."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", FutureWarning)
        try:
            # parsed afresh: re.compile would answer from its cache, without the warning
            _regex_parser.parse(pattern, PATTERN_FLAGS)
        except re.error:
            return None
    return next((str(w.message) for w in caught if issubclass(w.category, FutureWarning)), None)
