"""`runner.playground.keep`: a conversation becomes a `runner test` case that passes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from runner.playground import keep
from runner.playground.health import run_case_file, schema_link
from runner.resources import schema_path
from tests.playground.conftest import ask, copy_support


def kept_rounds(service: Any, session: str) -> list[keep.KeptRound]:
    rounds = service.session(session)["rounds"]
    records = [service.round(session, r["round"]) for r in rounds]
    return [keep.KeptRound(r["message"], r["result"], r["trace"]) for r in records]


@pytest.fixture(scope="module")
def warranty(service: Any) -> list[keep.KeptRound]:
    first = ask(service, "What warranty do I get on my washing machine?")
    ask(service, "It is a KW-720X", first["session"])
    return kept_rounds(service, first["session"])


def test_a_clarified_conversation_keeps_a_message_turn_and_an_answer_turn(
    warranty: list[keep.KeptRound], support: Path
) -> None:
    case = keep.keep(warranty, pipeline_path=support, provider="offline").case
    first, second = case["turns"]
    assert first["message"] == "What warranty do I get on my washing machine?"
    assert first["expect"]["outcome"] == "clarification"
    assert first["expect"]["question"] == {"contains": ["Which Kestrel model is it?"]}
    assert second["answer"] == "It is a KW-720X"
    assert second["expect"]["outcome"] == "answer"
    assert "1:warranty_check" in second["expect"]["ran"]
    assert second["expect"]["llm_calls"]["total"] == sum(
        n for purpose, n in second["expect"]["llm_calls"].items() if purpose != "total"
    )
    assert "llm" not in case  # the offline provider reproduces its own replies


def test_a_comparison_keeps_its_forced_lookups_skipped_subtasks_and_sources(
    service: Any, support: Path
) -> None:
    result = ask(service, "Compare the KD-450 and the KD-600X")
    rounds = kept_rounds(service, result["session"])
    expect = keep.keep(rounds, pipeline_path=support, provider="offline").case["turns"][0]["expect"]
    assert expect["ran"] == ["1:compare_products", "1.1:product_lookup", "1.2:product_lookup"]
    assert expect["skipped"] == ["1.3", "1.4"]
    assert expect["sources"] == [  # a table's row is pinned by its key
        {"document": "products.csv", "heading": "KD-450"},
        {"document": "products.csv", "heading": "KD-600X"},
    ]
    assert expect["llm_calls"] == {"decompose": 1, "tool": 1, "total": 2}


def test_a_kept_case_is_written_beside_the_pipeline_and_runner_test_passes_it(
    warranty: list[keep.KeptRound], support: Path, tmp_path: Path
) -> None:
    target = support.parent / "tests" / "kept-by-unit-test.yaml"
    kept = keep.keep(warranty, pipeline_path=support, provider="offline", test_file=target)
    path, name = keep.save(kept, schema_path=schema_link(target))
    assert (path, name) == (target, kept.name)
    modeline = path.read_text(encoding="utf-8").splitlines()[0]
    schema = modeline.removeprefix("# yaml-language-server: $schema=")
    assert (path.parent / schema).resolve() == schema_path("testcase").resolve()
    run = run_case_file(path)
    assert run.passed, run.text
    assert [c.name for c in run.cases] == [kept.name]


def test_a_second_case_is_appended_under_a_new_name(
    warranty: list[keep.KeptRound], support: Path
) -> None:
    target = support.parent / "tests" / "kept-twice.yaml"
    for _ in range(2):
        keep.save(keep.keep(warranty, pipeline_path=support, provider="offline", test_file=target))
    names = [case["name"] for case in yaml.safe_load(target.read_text(encoding="utf-8"))["cases"]]
    assert names == [warranty[0].message, f"{warranty[0].message} (2)"]
    assert run_case_file(target).passed


def test_a_test_file_the_playground_did_not_write_is_left_alone(
    warranty: list[keep.KeptRound], tmp_path: Path
) -> None:
    target = tmp_path / "compare.yaml"
    target.write_text("llm: {provider: offline}\ncases: []\n", encoding="utf-8")
    kept = keep.keep(
        warranty, pipeline_path=tmp_path / "p.yaml", provider="offline", test_file=target
    )
    with pytest.raises(keep.KeepError, match="not a file the playground wrote"):
        keep.save(kept)
    assert target.read_text(encoding="utf-8") == "llm: {provider: offline}\ncases: []\n"


def test_a_real_model_conversation_keeps_its_replies_as_the_script(tmp_path: Path) -> None:
    rounds = [
        keep.KeptRound(
            "Is the KW-620 quiet?",
            {"outcome": "answer", "sources": [], "stats": {"by_purpose": {"answer": {"calls": 1}}}},
            replies=[keep.RecordedReply("answer", None, "Is the KW-620 quiet? (yes)", "Yes.")],
        )
    ]
    case = keep.keep(rounds, pipeline_path=tmp_path / "p.yaml", provider="openai_like").case
    assert case["llm"]["script"] == [
        {
            "purpose": "answer",
            "task": r"^Is\ the\ KW\-620\ quiet\?\ \(yes\)$",
            "reply": "Yes.",
            "times": 1,
        }
    ]


def test_a_real_model_conversation_without_recorded_replies_cannot_be_kept(tmp_path: Path) -> None:
    rounds = [keep.KeptRound("Hi", {"outcome": "answer"})]
    with pytest.raises(keep.KeepError, match="replies were not recorded"):
        keep.keep(rounds, pipeline_path=tmp_path / "p.yaml", provider="ollama")


def test_an_empty_conversation_cannot_be_kept(tmp_path: Path) -> None:
    with pytest.raises(keep.KeepError, match="no rounds yet"):
        keep.keep([], pipeline_path=tmp_path / "p.yaml", provider="offline")


def test_a_degraded_round_is_kept_as_expected_to_degrade_and_said_so(tmp_path: Path) -> None:
    degraded = {"outcome": "answer", "degraded": True, "sources": [], "stats": {}}
    kept = keep.keep(
        [keep.KeptRound("What does it cost?", degraded)],
        pipeline_path=tmp_path / "p.yaml",
        provider="offline",
    )
    assert kept.case["turns"][0]["expect"]["degraded"] is True
    assert any("round 1 was degraded" in note for note in kept.notes)


@pytest.mark.parametrize(
    "llm",
    ["{script_file: /etc/passwd}", "{cassette: /etc/hostname}", "{provider: replay}"],
)
def test_an_edited_case_names_no_file_and_no_model(
    warranty: list[keep.KeptRound], support: Path, llm: str
) -> None:
    """Issue 19, H1: the edited case took any `llm:`, and `runner test` read the file it named."""
    kept = keep.keep(warranty, pipeline_path=support, provider="offline")
    text = f"- name: leak\n  llm: {llm}\n  turns:\n    - message: hi\n"
    with pytest.raises(keep.KeepError, match="names no file and no model"):
        keep.edited(kept, text)


def test_a_kept_case_pins_a_documents_section_not_its_page(service: Any, support: Path) -> None:
    result = ask(service, "Can I put aluminium pans in the dishwasher?")
    expect = keep.keep(
        kept_rounds(service, result["session"]), pipeline_path=support, provider="offline"
    )
    (source, *_) = expect.case["turns"][0]["expect"]["sources"]
    assert source == {
        "document": "manuals/dishwashers-kd-user-manual.md",
        "heading": "Items that are not dishwasher safe",
    }


# its answer quotes the same four sections whether pages hold 200 words or 60
KETTLE = "How do I descale the kettle?"


def test_a_kept_case_still_passes_when_the_pages_are_cut_smaller(tmp_path: Path) -> None:
    from runner.service.pipelines import Service

    pipeline = copy_support(tmp_path / "support")
    opened = Service.open([pipeline])
    try:
        first = ask(opened, KETTLE)
        kept = keep.keep(
            kept_rounds(opened, first["session"]), pipeline_path=pipeline, provider="offline"
        )
    finally:
        opened.close()
    pages_before = {(s["document"], s["page"]) for s in first["sources"] if "page" in s}
    path, _name = keep.save(kept)
    text = pipeline.read_text(encoding="utf-8")
    pipeline.write_text(text.replace("max_words: 200", "max_words: 60"), encoding="utf-8")
    run = run_case_file(path)
    assert run.passed, run.text
    reopened = Service.open([pipeline])
    try:
        again = ask(reopened, KETTLE)
    finally:
        reopened.close()
    pages_after = {(s["document"], s["page"]) for s in again["sources"] if "page" in s}
    assert pages_before and pages_before != pages_after  # the pages did move


def test_the_tool_that_asked_the_clarifying_question_is_kept_among_those_that_ran(
    warranty: list[keep.KeptRound], support: Path
) -> None:
    case = keep.keep(warranty, pipeline_path=support, provider="offline").case
    first = case["turns"][0]["expect"]
    assert first["outcome"] == "clarification"
    assert "1:warranty_check" in first["ran"]


def test_issue_31_f16_an_edited_case_of_too_many_turns_is_refused_before_it_is_written(
    warranty: list[keep.KeptRound], support: Path
) -> None:
    kept = keep.keep(warranty, pipeline_path=support, provider="offline")
    turns = "".join("    - message: hi\n" for _ in range(1_500))
    with pytest.raises(keep.KeepError, match=r"1500 turns, more than a kept case may \(50\)"):
        keep.edited(kept, f"- name: long\n  turns:\n{turns}")
    assert not kept.path.exists() or "name: long" not in kept.path.read_text(encoding="utf-8")


def test_issue_31_f16_a_case_past_the_size_bound_is_not_saved(
    warranty: list[keep.KeptRound], tmp_path: Path
) -> None:
    kept = keep.keep(warranty, pipeline_path=tmp_path / "p.yaml", provider="offline")
    huge = {**kept.case, "turns": [{"message": "x" * (keep.MAX_CASE_CHARS + 1)}]}
    with pytest.raises(keep.KeepError, match="characters of YAML"):
        keep.save(keep.KeptCase(kept.name, huge, kept.path))
    assert not kept.path.exists()


@pytest.mark.parametrize(
    ("question", "kept"),
    [
        (
            "Which Linux distribution does the server run (for example Ubuntu, Debian, Fedora or "
            "Arch), and which release of it? I need both.",
            "Which Linux distribution does the server run (for example Ubuntu, Debian, Fedora or "
            "Arch), and which release of it?",
        ),
        ("Which one, e.g. Ubuntu or Debian? And its version.", "Which one, e.g. Ubuntu or Debian?"),
    ],
)
def test_a_kept_clarifying_question_is_never_cut_mid_sentence(question: str, kept: str) -> None:
    expect = keep.expectations({"outcome": "clarification", "question": question})
    assert expect["question"] == {"contains": [kept]}
