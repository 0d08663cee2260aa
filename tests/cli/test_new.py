"""`runner new FOLDER --docs DOCS` (runner/cli/new.py): a first help-desk pipeline over a folder
of documents that validates, whose first test passes, which answers from the documents, and
which never overwrites a file."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import Result

from runner.cli import new

DOCUMENTS = {
    "returns.md": "# Returns and refunds\n\nYou may return a kettle within 30 days of delivery "
    "for a full refund. Pack it in its box and print the label from your account.\n",
    "descaling.md": "# Descaling the kettle\n\nDescale the kettle every month in hard-water "
    "areas: half fill it with water and white vinegar, boil, wait an hour and rinse twice.\n",
    "delivery.md": "# Delivery times\n\nOrders placed before noon are delivered the next "
    "working day. Delivery is free above 40 euros.\n",
}


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Path]:
    """A folder with the documents in `manuals/`, and the working folder while a test runs."""
    (tmp_path / "manuals").mkdir()
    for name, text in DOCUMENTS.items():
        (tmp_path / "manuals" / name).write_text(text, encoding="utf-8")
    here = Path.cwd()
    os.chdir(tmp_path)
    try:
        yield tmp_path
    finally:
        os.chdir(here)


def test_new_writes_a_pipeline_a_test_and_a_question_set_and_validates_them(
    cli: Callable[..., Result], site: Path
) -> None:
    done = cli("new", "desk", "--docs", "manuals")
    assert done.exit_code == 0, done.output
    assert (site / "desk" / "desk.yaml").is_file()
    assert (site / "desk" / "tests" / "desk.yaml").is_file()
    assert "desk/desk.yaml: ok" in done.output
    for command in ("runner index desk/desk.yaml", "runner test desk/tests/", "runner eval"):
        assert command in done.output
    assert cli("validate", "desk/desk.yaml").exit_code == 0


def test_the_written_pipeline_is_the_recommended_shape(
    cli: Callable[..., Result], site: Path
) -> None:
    assert cli("new", "desk", "--docs", "manuals").exit_code == 0
    text = (site / "desk" / "desk.yaml").read_text(encoding="utf-8")
    assert f"path: {(site / 'manuals').resolve().as_posix()}" in text  # outside: absolute
    for line in (
        "kind: retrieve",
        "kind: deep_search",
        "deep_fallback:",
        "retrieval_tool: docs_rag",
    ):
        assert line in text
    expected = "mode: hybrid" if new.meaning_installed() else "mode: keyword"
    assert expected in text.split("kind: retrieve", 1)[1].split("- name:", 1)[0]


def test_without_the_embed_extra_it_searches_by_words_and_says_how_to_turn_meaning_on(
    cli: Callable[..., Result], site: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(new, "meaning_installed", lambda: False)
    assert cli("new", "desk", "--docs", "manuals").exit_code == 0
    text = (site / "desk" / "desk.yaml").read_text(encoding="utf-8")
    rag = text.split("kind: retrieve", 1)[1].split("- name:", 1)[0]
    assert "mode: keyword" in rag and "pip install 'runner[embed]'" in rag and "hybrid" in rag


def test_the_first_test_case_passes(cli: Callable[..., Result], site: Path) -> None:
    assert cli("new", "desk", "--docs", "manuals").exit_code == 0
    done = cli("test", "desk/tests/")
    assert done.exit_code == 0, done.output
    assert "1 passed, 0 failed" in done.output


def test_the_written_pipeline_answers_from_the_documents(
    cli: Callable[..., Result], site: Path
) -> None:
    assert cli("new", "desk", "--docs", "manuals").exit_code == 0
    done = cli("run", "desk/desk.yaml", "How long do I have to return a kettle?")
    assert done.exit_code == 0, done.output
    assert "30 days" in done.output and "returns.md" in done.output


def test_the_question_set_has_a_header_a_commented_example_and_a_first_question(
    cli: Callable[..., Result], site: Path
) -> None:
    from runner.eval.questions import load_questions

    assert cli("new", "desk", "--docs", "manuals").exit_code == 0
    path = site / "desk" / "eval" / "questions.csv"
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "id,question,sources,answer,tags,follow_up"
    assert all(line.startswith("# ") for line in lines[1:5])
    assert lines[4].startswith("# returns,")  # the example, a row once the # is removed
    [first] = load_questions(path).questions
    assert first.question.startswith("What does the documentation say about")


def test_new_refuses_to_overwrite_a_file_and_names_it(
    cli: Callable[..., Result], site: Path
) -> None:
    (site / "desk" / "tests").mkdir(parents=True)
    (site / "desk" / "tests" / "desk.yaml").write_text("cases: []\n", encoding="utf-8")
    done = cli("new", "desk", "--docs", "manuals")
    assert done.exit_code == 1
    assert "desk/tests/desk.yaml already exists" in done.output
    assert not (site / "desk" / "desk.yaml").exists()  # nothing written
    assert (site / "desk" / "tests" / "desk.yaml").read_text(encoding="utf-8") == "cases: []\n"


def test_a_docs_folder_without_documents_is_refused(cli: Callable[..., Result], site: Path) -> None:
    (site / "empty").mkdir()
    done = cli("new", "desk", "--docs", "empty")
    assert done.exit_code == 1 and "holds no document" in done.output
    assert not (site / "desk").exists()


def test_documents_inside_the_folder_are_named_relative_to_the_pipeline(
    cli: Callable[..., Result], site: Path
) -> None:
    (site / "desk").mkdir()
    (site / "manuals").rename(site / "desk" / "docs")
    assert cli("new", "desk", "--docs", "desk/docs").exit_code == 0
    assert "    path: docs\n" in (site / "desk" / "desk.yaml").read_text(encoding="utf-8")
