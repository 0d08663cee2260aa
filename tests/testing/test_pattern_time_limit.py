"""Issue 19, M4: a regular expression from a test case or a pipeline runs with a time limit
(runner/text/patterns.py); one that backtracks without end fails its check, it does not hold
the process (a kept case's `matches: '(?s).*.*.*.*!'` froze the server for 55 s)."""

from __future__ import annotations

import time

import pytest

import runner.text.patterns as patterns
from runner.engine.activation import rule_matches
from runner.testing.expect import check
from runner.testing.model import Expect, TextExpect

BACKTRACKING = "(a|aa)+$"  # tries every way to split a run of a's: exponential on re
LONG_RUN = "a" * 40 + "b"


@pytest.fixture(autouse=True)
def short_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(patterns, "MATCH_TIMEOUT_S", 0.05)


def answered(text: str) -> dict[str, object]:
    return {"outcome": "answer", "answer": text, "sources": [], "tasks": None}


def test_a_matches_expectation_that_backtracks_without_end_fails_with_its_reason() -> None:
    started = time.perf_counter()
    [difference] = check(Expect(answer=TextExpect(matches=BACKTRACKING)), answered(LONG_RUN))
    assert time.perf_counter() - started < 5
    assert "took more than 0.05 s" in difference and BACKTRACKING in difference


def test_the_reported_pattern_of_the_issue_is_answered_at_once() -> None:
    started = time.perf_counter()
    differences = check(Expect(answer=TextExpect(matches="(?s).*.*.*.*!")), answered("x" * 5000))
    assert differences == ["answer does not match /(?s).*.*.*.*!/"]
    assert time.perf_counter() - started < 5


def test_an_activation_pattern_that_backtracks_without_end_is_stopped() -> None:
    with pytest.raises(patterns.PatternTimeoutError, match="simplify it"):
        rule_matches((), BACKTRACKING, LONG_RUN)


def test_a_matches_expectation_stays_case_sensitive() -> None:
    assert check(Expect(answer=TextExpect(matches="KW")), answered("the KW-620")) == []
    assert check(Expect(answer=TextExpect(matches="kw")), answered("the KW-620")) != []
