"""The one rule for the regular expressions a pipeline author writes: an activation `pattern`, a
prompt type's `pattern`, and a scripted rule's `task` / `prompt` (in `llm.script`,
`llm.script_file` and test cases).

They are Python regular expressions, *searched* (not matched) in the text and case-insensitive:
`pattern: warranty` matches "Warranty". A part that must keep its case says so with
`(?-i:...)`, e.g. `(?-i:KD)-\\d+`. Everything that compiles such a pattern — the engine, the
scripted provider and `runner validate` — goes through `compile_pattern`, so they cannot
disagree. (A test case's `matches:` expectation is an assertion, not a pattern of the pipeline:
it keeps Python's default, case-sensitive; see docs/testing.md.)
"""

from __future__ import annotations

import re
import warnings
from functools import cache

try:  # the parser re.compile uses (what warns), without re's cache in front of it
    from re import _parser as _regex_parser  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover  (Python 3.10)
    import sre_parse as _regex_parser

PATTERN_FLAGS = re.IGNORECASE


@cache
def compile_pattern(pattern: str) -> re.Pattern[str]:
    """An author's pattern, compiled once with PATTERN_FLAGS. Raises re.error. Python's own
    warnings about it (a FutureWarning for `[[`) are `runner validate`'s to report (R127),
    never printed at run time with a path into runner's source."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return re.compile(pattern, PATTERN_FLAGS)


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
