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
from functools import cache

PATTERN_FLAGS = re.IGNORECASE


@cache
def compile_pattern(pattern: str) -> re.Pattern[str]:
    """An author's pattern, compiled once with PATTERN_FLAGS. Raises re.error."""
    return re.compile(pattern, PATTERN_FLAGS)
