"""Paths stay inside the pipeline's folder once symlinks are followed (R124), a path the file
system refuses is a located error (R125), and the corpus opt-in `follow_symlinks`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from runner.config import PipelineError, load_pipeline, validate_file
from runner.config.paths import PathOutsideFolder, PathUnusable, contained

from .helpers import BASE

CORPUS = """\
domain: shop
corpora:
  manual: {path: docs}
tools:
  - name: rag
    kind: retrieve
    corpus: manual
"""


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder beside the pipeline's, holding a secret."""
    folder = tmp_path.parent / f"{tmp_path.name}-outside"
    folder.mkdir()
    (folder / "secret.txt").write_text("the root password\n", encoding="utf-8")
    (folder / "docs").mkdir()
    (folder / "docs" / "a.md").write_text("# A\nKept elsewhere.\n", encoding="utf-8")
    return folder


def codes(path: Path) -> list[tuple[str, int, int]]:
    return [(d.code, d.line, d.col) for d in validate_file(path).diagnostics]


def test_a_template_that_links_outside_the_folder_is_refused(
    write_pipeline: Callable[..., Path], outside: Path, tmp_path: Path
) -> None:
    (tmp_path / "answer.j2").symlink_to(outside / "secret.txt")
    path = write_pipeline(BASE.replace('prompt: "Answer {{ task }}"', "template: answer.j2"))
    [error] = validate_file(path).diagnostics
    assert (error.code, error.line, error.col) == ("R124", 5, 15)
    expected = f"to ../{outside.name}/secret.txt, outside the pipeline's folder"
    assert expected in error.message
    assert "copy the file into the pipeline's folder" in error.hint


def test_a_template_reached_through_a_linked_folder_is_refused(
    write_pipeline: Callable[..., Path], outside: Path, tmp_path: Path
) -> None:
    (tmp_path / "shared").symlink_to(outside)
    path = write_pipeline(
        BASE.replace('prompt: "Answer {{ task }}"', "template: shared/secret.txt")
    )
    assert codes(path) == [("R124", 5, 15)]


def test_a_table_that_links_outside_the_folder_is_refused(
    write_pipeline: Callable[..., Path], outside: Path, tmp_path: Path
) -> None:
    (outside / "rows.csv").write_text("model,price\nKD-450,499\n", encoding="utf-8")
    (tmp_path / "rows.csv").symlink_to(outside / "rows.csv")
    text = BASE + "  - name: prices\n    kind: lookup\n    table: rows.csv\n    key: model\n"
    assert codes(write_pipeline(text)) == [("R124", 8, 12)]


def test_a_corpus_folder_that_links_outside_the_folder_is_refused(
    write_pipeline: Callable[..., Path], outside: Path, tmp_path: Path
) -> None:
    (tmp_path / "docs").symlink_to(outside / "docs")
    [error] = validate_file(write_pipeline(CORPUS)).diagnostics
    assert (error.code, error.line) == ("R124", 3)
    assert "follow_symlinks: true" in error.hint


def test_a_corpus_document_that_links_outside_the_folder_is_refused(
    write_pipeline: Callable[..., Path], outside: Path, tmp_path: Path
) -> None:
    path = write_pipeline(CORPUS, {"docs/own.md": "# Own\nOurs.\n"})
    (tmp_path / "docs" / "b.md").symlink_to(outside / "docs" / "a.md")
    (tmp_path / "docs" / "c.md").symlink_to(outside / "docs" / "a.md")
    [error] = validate_file(path).diagnostics
    assert (error.code, error.line) == ("R124", 3)
    assert error.message.startswith("corpus `manual`: the document docs/b.md (and 1 more) is a")
    assert "set `follow_symlinks: true` on the corpus" in error.hint


def test_follow_symlinks_lets_a_corpus_read_documents_kept_elsewhere(
    write_pipeline: Callable[..., Path], outside: Path, tmp_path: Path
) -> None:
    (tmp_path / "docs").symlink_to(outside / "docs")
    text = CORPUS.replace("{path: docs}", "{path: docs, follow_symlinks: true}")
    pipeline = load_pipeline(write_pipeline(text))
    assert pipeline.corpora["manual"].follow_symlinks is True


def test_a_link_that_stays_inside_the_folder_is_allowed_and_read_through(
    write_pipeline: Callable[..., Path], tmp_path: Path
) -> None:
    path = write_pipeline(
        BASE.replace('prompt: "Answer {{ task }}"', "template: current.j2"),
        {"templates/v2.j2": "Answer {{ task }}"},
    )
    (tmp_path / "current.j2").symlink_to(tmp_path / "templates" / "v2.j2")
    [tool] = load_pipeline(path).tools
    assert tool.options.template.path == (tmp_path / "templates" / "v2.j2").resolve()


def test_a_document_linked_outside_after_validation_is_refused_when_the_corpus_is_read(
    write_pipeline: Callable[..., Path], outside: Path, tmp_path: Path
) -> None:
    from runner.retrieval.index import open_corpus

    pipeline = load_pipeline(write_pipeline(CORPUS, {"docs/own.md": "# Own\nOurs.\n"}))
    (tmp_path / "docs" / "late.md").symlink_to(outside / "docs" / "a.md")
    with pytest.raises(PathOutsideFolder, match=r"the document docs/late\.md is a symbolic link"):
        open_corpus(pipeline, "manual")


def test_a_link_changed_between_validation_and_build_stops_the_build(
    write_pipeline: Callable[..., Path], outside: Path, tmp_path: Path, monkeypatch
) -> None:
    from runner.config import checks

    (tmp_path / "answer.j2").symlink_to(outside / "secret.txt")
    path = write_pipeline(BASE.replace('prompt: "Answer {{ task }}"', "template: answer.j2"))
    monkeypatch.setattr(checks, "FAMILIES", ())  # as if the link appeared after the checks
    with pytest.raises(PipelineError, match="R124"):
        load_pipeline(path)


@pytest.mark.parametrize(
    ("text", "where"),
    [
        (BASE.replace('prompt: "Answer {{ task }}"', f"template: {'x' * 300}.j2"), (5, 15)),
        (CORPUS.replace("{path: docs}", f"{{path: {'d' * 300}}}"), (3, 18)),
    ],
    ids=["template", "corpus"],
)
def test_a_path_too_long_for_the_file_system_is_a_located_error(
    write_pipeline: Callable[..., Path], text: str, where: tuple[int, int]
) -> None:
    [error] = validate_file(write_pipeline(text)).diagnostics
    assert (error.code, error.line, error.col) == ("R125", *where)
    assert "File name too long" in error.message and "characters)" in error.message
    assert error.hint == "shorten the file name"


@pytest.mark.parametrize(
    ("text", "where"),
    [
        (BASE.replace('prompt: "Answer {{ task }}"', 'template: "a\\0.j2"'), (5, 15)),
        (CORPUS.replace("{path: docs}", '{path: "do\\0cs"}'), (3, 18)),
    ],
    ids=["template", "corpus"],
)
def test_a_path_with_a_nul_character_is_a_located_error(
    write_pipeline: Callable[..., Path], text: str, where: tuple[int, int]
) -> None:
    # YAML writes it as an escape in a quoted text; os.stat would raise ValueError on it
    [error] = validate_file(write_pipeline(text)).diagnostics
    assert (error.code, error.line, error.col) == ("R125", *where)
    assert "NUL character" in error.message


def test_a_loop_of_symlinks_is_a_located_error(
    write_pipeline: Callable[..., Path], tmp_path: Path
) -> None:
    (tmp_path / "a.j2").symlink_to(tmp_path / "b.j2")
    (tmp_path / "b.j2").symlink_to(tmp_path / "a.j2")
    path = write_pipeline(BASE.replace('prompt: "Answer {{ task }}"', "template: a.j2"))
    assert codes(path) == [("R125", 5, 15)]


def test_contained_resolves_a_path_inside_and_refuses_one_outside(
    tmp_path: Path, outside: Path
) -> None:
    (tmp_path / "inside.txt").write_text("", encoding="utf-8")
    (tmp_path / "link").symlink_to(outside / "secret.txt")
    assert contained(Path("inside.txt"), tmp_path) == (tmp_path / "inside.txt").resolve()
    with pytest.raises(PathOutsideFolder) as raised:
        contained(tmp_path / "link", tmp_path)
    assert raised.value.target == (outside / "secret.txt").resolve()
    with pytest.raises(PathUnusable):
        contained(Path("y" * 300), tmp_path)


def test_runner_index_refuses_a_document_linked_after_validation_with_a_readable_error(
    write_pipeline: Callable[..., Path], outside: Path, tmp_path: Path, monkeypatch
) -> None:
    from click.testing import CliRunner

    from runner.cli import main
    from runner.config import checks

    path = write_pipeline(CORPUS, {"docs/own.md": "# Own\nOurs.\n"})
    (tmp_path / "docs" / "late.md").symlink_to(outside / "docs" / "a.md")
    monkeypatch.setattr(checks, "FAMILIES", ())  # as if the link appeared after validation
    result = CliRunner().invoke(main, ["index", str(path)])
    assert result.exit_code == 1
    assert "corpus `manual`: the document docs/late.md is a symbolic link" in result.output
    assert "set `follow_symlinks: true` on the corpus" in result.output
    assert "internal error" not in result.output


def test_a_refused_path_is_an_expected_error_not_an_internal_one(tmp_path: Path) -> None:
    from runner.render import describe_error

    error = PathUnusable(tmp_path / "x", "the file system cannot use this path: …", "fix it")
    assert describe_error(error) == "the file system cannot use this path: …; fix it"
