"""`runner test` ignores $RUNNER_LLM: a case's replies come from its own rules (docs/testing.md,
docs/llm.md), so an override in the developer's shell cannot change what a test checks."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from tests.testing.conftest import COMPARE_RULES

ROOT = Path(__file__).resolve().parents[2]
CASE = (
    COMPARE_RULES
    + """
cases:
  - name: price
    turns:
      - message: What does the KW-620 cost?
        expect: {outcome: answer, answer: The KW-620 costs 449 EUR.}
"""
)


def test_runner_test_keeps_the_case_s_scripted_replies_under_runner_llm(
    write: Callable[..., Path], cli: Callable[..., Result], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RUNNER_LLM", "offline")
    result = cli("test", write(CASE))
    assert result.exit_code == 0, result.output


def test_no_doc_shows_runner_llm_changing_runner_test() -> None:
    documents = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    shown = re.compile(r"RUNNER_LLM=\S+\s+(\S*/)?runner test\b")
    assert [doc.name for doc in documents if shown.search(doc.read_text("utf-8"))] == []
