"""`runner eval` that does not flatter (issue 32.5): gold headings matched as an author reads
them, a CSV heading that holds `|`, relevance beside groundedness, definitions printed with the
figures, two-turn questions shown with their turns, errors wherever a run is listed."""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree

import pytest

from runner.eval.definitions import DEFINITIONS
from runner.eval.formats import FORMATS, Printed, render
from runner.eval.groundedness import grounding
from runner.eval.metrics import question_record
from runner.eval.model import Gold, Question
from runner.eval.questions import QuestionSetError, load_questions
from runner.eval.relevance import on_topic_check, question_stems, relevance
from runner.eval.report_html import render_report
from runner.eval.totals import METRICS, summarize
from runner.text.headings import heading_key, same_heading
from tests.eval.conftest import write

# --- headings as an author reads them -------------------------------------------------------


@pytest.mark.parametrize(
    "page_heading",
    [
        "Forcing HTTPS ¶",
        "Forcing HTTPS#",
        "🔗 Forcing HTTPS",
        "§ 4.2. Forcing HTTPS",
        "forcing  https.",
        "Forcing\u00a0HTTPS:",
    ],
)
def test_a_gold_heading_matches_a_page_heading_whatever_its_marks(page_heading: str) -> None:
    gold = Gold.parse("rewrite/avoid.html#Forcing HTTPS")
    assert gold.matches({"document": "rewrite/avoid.html", "heading": page_heading})


def test_a_gold_written_with_the_manuals_permalink_mark_matches_the_page() -> None:
    gold = Gold.parse("rewrite/avoid.html#Forcing HTTPS ¶")
    assert gold.matches({"document": "rewrite/avoid.html", "heading": "Forcing HTTPS"})


def test_different_words_are_still_different_headings() -> None:
    assert not same_heading("Forcing HTTPS", "Forcing HTTP")
    assert heading_key("???") == "???"  # a heading of punctuation only is compared as written


def test_runner_test_compares_source_headings_with_the_same_key() -> None:
    from runner.testing.expect import _same_source
    from runner.testing.model import SourceExpect

    wanted = SourceExpect(document="avoid.html", page=None, heading="Forcing HTTPS")
    assert _same_source(wanted, {"document": "rewrite/avoid.html", "heading": "Forcing HTTPS ¶"})


# --- a CSV heading that holds `|` -------------------------------------------------------------


def test_a_pipe_written_backslash_pipe_stays_in_the_heading(tmp_path: Path) -> None:
    path = write(
        tmp_path / "q.csv", "id,question,sources\nnc,case?,rewrite/flags.html#NC\\|nocase\n"
    )
    [question] = load_questions(path).questions
    assert question.sources == (Gold("rewrite/flags.html", "NC|nocase"),)


def test_a_plain_pipe_that_cuts_a_heading_is_refused_with_the_fix(tmp_path: Path) -> None:
    path = write(tmp_path / "q.csv", "id,question,sources\nnc,case?,rewrite/flags.html#NC|nocase\n")
    with pytest.raises(QuestionSetError) as raised:
        load_questions(path)
    [diagnostic] = raised.value.diagnostics
    assert (diagnostic.code, diagnostic.line, diagnostic.col) == ("Q108", 2, 10)
    assert "rewrite/flags.html#NC\\|nocase" in (diagnostic.hint or "")


def test_a_pipe_between_two_documents_still_separates_them(tmp_path: Path) -> None:
    path = write(tmp_path / "q.csv", "id,question,sources\na,x?,kw.md#Error codes|warranty.md\n")
    [question] = load_questions(path).questions
    assert question.sources == (Gold("kw.md", "Error codes"), Gold("warranty.md"))


def test_a_yaml_heading_may_hold_a_pipe_as_it_is(tmp_path: Path) -> None:
    path = write(tmp_path / "q.yaml", "- {question: case?, sources: 'flags.html#NC|nocase'}\n")
    [question] = load_questions(path).questions
    assert question.sources == (Gold("flags.html", "NC|nocase"),)


# --- relevance beside groundedness -----------------------------------------------------------

PAGES = {
    ("troubleshooting/dryer-not-heating.md", 3): (
        "First: is it really not heating?",
        "No water at all in the container after a full cycle; the laundry is as wet as it came "
        "out of the washing machine after 60 minutes.",
    ),
    ("troubleshooting/washing-machine-not-draining.md", 2): (
        "Water left in the drum",
        "If water stays in the drum after the cycle, clean the drain pump filter.",
    ),
}
DRAIN = "water stays in the drum of my washing machine after the cycle"
FROM_THE_DRYER = (
    "No water at all in the container after a full cycle; the laundry is as wet as it came out "
    "of the washing machine. [troubleshooting/dryer-not-heating.md p. 3]"
)
FROM_THE_WASHER = (
    "If water stays in the drum after the cycle, clean the drain pump filter. "
    "[troubleshooting/washing-machine-not-draining.md p. 2]"
)


def text_of(document: str, page: int) -> str | None:
    return PAGES[(document, page)][1] if (document, page) in PAGES else None


def heading_of(document: str, page: int) -> str | None:
    return PAGES[(document, page)][0] if (document, page) in PAGES else None


def on_topic(question: str):  # type: ignore[no-untyped-def]
    return on_topic_check(question_stems([question]), heading_of)


def test_an_off_topic_answer_quoted_word_for_word_is_not_grounded() -> None:
    assert grounding(FROM_THE_DRYER, text_of).share == 1.0  # what it scored before
    assert grounding(FROM_THE_DRYER, text_of, on_topic(DRAIN)).share == 0.0


def test_an_answer_from_the_page_on_the_topic_is_grounded() -> None:
    assert grounding(FROM_THE_WASHER, text_of, on_topic(DRAIN)).share == 1.0


def test_relevance_is_the_share_of_sentences_citing_a_page_on_the_topic() -> None:
    assert relevance(FROM_THE_DRYER, on_topic(DRAIN)).share == 0.0
    assert relevance(FROM_THE_WASHER, on_topic(DRAIN)).share == 1.0
    both = relevance(f"{FROM_THE_WASHER} {FROM_THE_DRYER}", on_topic(DRAIN))
    assert (both.addressed, both.sentences) == (1, 2)


def test_the_follow_up_counts_as_the_question() -> None:
    asked = on_topic_check(question_stems(["it does not work", "the dryer"]), heading_of)
    assert relevance(FROM_THE_DRYER, asked).share == 1.0


def test_relevance_is_a_metric_of_the_run() -> None:
    record = question_record(
        Question("q", DRAIN),
        [{"outcome": "answer", "answer": FROM_THE_DRYER}],
        groundedness=None,
        judge=None,
        latency_ms=1.0,
        trace=None,
        relevance=relevance(FROM_THE_DRYER, on_topic(DRAIN)).to_json(),
    )
    assert summarize([record])["metrics"]["relevance"] == 0.0


# --- definitions, turns, errors ---------------------------------------------------------------


def two_records() -> list[dict]:
    clarified = {"outcome": "clarification", "question": "Which model do you have?"}
    answered = {"outcome": "answer", "answer": "Descale it every month."}
    return [
        question_record(
            Question("turns", "how often do I descale", follow_up="the KC-300"),
            [clarified, answered],
            groundedness=None,
            judge=None,
            latency_ms=1.0,
            trace=None,
        ),
        question_record(
            Question("crash", "hello"),
            [{"outcome": "error", "error": "the model server is down"}],
            groundedness=None,
            judge=None,
            latency_ms=1.0,
            trace=None,
        ),
    ]


def printed() -> Printed:
    found = two_records()
    return Printed(summarize(found), found, None, [], "q.csv", "run")


def test_every_metric_has_its_definition() -> None:
    assert set(METRICS) <= set(DEFINITIONS)


@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_the_text_formats_say_what_the_figures_mean(fmt: str) -> None:
    out = render(printed(), fmt)
    assert "what the figures mean" in out.lower()
    assert DEFINITIONS["groundedness"] in out
    assert DEFINITIONS["relevance"] in out


def test_the_json_format_carries_the_definitions() -> None:
    document = json.loads(render(printed(), "json"))
    assert document["definitions"]["hit@1"] == DEFINITIONS["hit@1"]


def test_the_junit_format_carries_the_definitions_as_properties() -> None:
    suite = ElementTree.fromstring(render(printed(), "junit").split("\n", 1)[1])
    values = {p.get("name"): p.get("value") for p in suite.iter("property")}
    assert DEFINITIONS["errors"] in values["errors"]


def test_the_github_format_says_what_its_figures_mean() -> None:
    assert f"hit@1: {DEFINITIONS['hit@1']}" in render(printed(), "github")


def test_every_format_renders() -> None:
    assert all(render(printed(), fmt) for fmt in FORMATS)


def test_a_two_turn_question_is_shown_with_its_turns() -> None:
    found = two_records()
    page = render_report({"metrics": {}, **summarize(found)}, found, None, plots_wanted=False)
    assert "Which model do you have?" in page
    assert "user: the KC-300" in page
    assert "Descale it every month." in page
    assert found[0]["conversation"][1] == {
        "user": "the KC-300",
        "outcome": "answer",
        "reply": "Descale it every month.",
    }


def test_the_report_defines_its_figures_and_lists_errors_by_tag() -> None:
    found = two_records()
    page = render_report({"metrics": {}, **summarize(found)}, found, None, plots_wanted=False)
    assert "What the figures mean" in page
    assert DEFINITIONS["errors"] in page


CARRY = (
    "- {id: carry, question: can I take my unused holiday days into next year,\n"
    "   sources: annual-leave-policy.md#Carrying leave over}\n"
)


@pytest.mark.parametrize(("synonyms", "relevant"), [(False, False), (True, True)])
def test_the_corpus_synonyms_tell_relevance_what_a_users_word_stands_for(
    cli, tmp_path: Path, synonyms: bool, relevant: bool
) -> None:
    from tests.eval.conftest import copy_hr, records

    pipeline = copy_hr(tmp_path / "hr")
    if synonyms:
        text = pipeline.read_text(encoding="utf-8")
        marker = "    pages: {max_words: 180}\n"
        pipeline.write_text(
            text.replace(marker, marker + "    synonyms: {holiday: leave}\n", 1), "utf-8"
        )
    questions = write(tmp_path / "q.yaml", CARRY)
    result = cli("eval", pipeline, questions, "--out", tmp_path / "run", "-q", "--no-report")
    assert result.exit_code == 0, result.output
    [record] = records(tmp_path / "run")
    assert record["sourced"] is True  # the right section, either way
    assert (record["relevance"] == 1.0) is relevant
