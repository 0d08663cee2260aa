"""The HTML report on its own: one page however many questions, and safe with any text."""

from __future__ import annotations

from runner.eval.metrics import question_record
from runner.eval.model import Question
from runner.eval.report_html import MAX_QUESTIONS_SHOWN, render_report
from runner.eval.totals import summarize


def records(count: int, answer: str = "Five days.") -> list[dict]:
    round_json = {"outcome": "answer", "answer": answer, "sources": [], "retrieval": []}
    return [
        question_record(
            Question(f"q{n}", "?"),
            [round_json],
            groundedness=None,
            judge=None,
            latency_ms=1.0,
            trace=None,
        )
        for n in range(count)
    ]


def summary(found: list[dict]) -> dict:
    return {
        "pipeline": "p.yaml",
        "questions": "q.csv",
        "started": "",
        "finished": "",
        **summarize(found),
    }


def test_a_big_set_shows_its_first_questions_and_says_where_the_rest_are() -> None:
    found = records(MAX_QUESTIONS_SHOWN + 5)
    page = render_report(summary(found), found, None, plots_wanted=False)
    assert page.count("<details") == MAX_QUESTIONS_SHOWN
    assert "… and 5 more questions" in page


def test_an_answer_is_shown_as_text_never_as_markup() -> None:
    found = records(1, answer="<script>alert(1)</script>")
    page = render_report(summary(found), found, None, plots_wanted=False)
    assert "<script>" not in page
    assert "&lt;script&gt;" in page
