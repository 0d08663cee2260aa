"""docs/eval.md defines every metric `runner eval` reports and every error code a question set
can get: the page is where an author looks them up."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from runner.eval import questions
from runner.eval.totals import METRICS
from tests.eval.conftest import ROOT

EVAL_MD = (ROOT / "docs" / "eval.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("metric", METRICS)
def test_every_metric_is_defined_in_docs_eval_md(metric: str) -> None:
    assert f"`{metric}`" in EVAL_MD


def test_every_question_set_error_code_is_in_docs_eval_md() -> None:
    source = Path(questions.__file__).read_text(encoding="utf-8")
    codes = set(re.findall(r'"(Q1\d\d)"', source))
    assert codes, "no Q code found in runner/eval/questions.py"
    assert sorted(code for code in codes if f"`{code}`" not in EVAL_MD) == []
