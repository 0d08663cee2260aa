"""The source viewer reads only a corpus's own documents (issue 19, L1), and works for every
corpus: one whose documents are symbolic links to a folder elsewhere, and one whose `path`
names that folder directly with an absolute or `~` path (issue 22, item 1)."""

from __future__ import annotations

from pathlib import Path

import pytest

from runner.config import load_pipeline, validate_file
from runner.playground.citations import SourceNotFoundError, source_page

PIPELINE = """\
version: 1
domain: desk
llm: {{provider: offline}}
corpora:
  docs: {{path: {path}, include: ["**/*.md"], exclude: ["drafts/**"]{extra}}}
retrieval_tool: docs_rag
tools:
  - {{name: docs_rag, kind: retrieve, corpus: docs, top_k: 3}}
"""
GUIDE = "# Resetting\n\nRun `git reset --soft HEAD~1` to undo the last commit and keep changes.\n"


def documents(folder: Path) -> Path:
    """A document folder: a guide, a draft the corpus excludes, files it does not include."""
    (folder / "drafts").mkdir(parents=True)
    (folder / "guide.md").write_text(GUIDE, encoding="utf-8")
    (folder / "drafts" / "secret.md").write_text("# Draft\n\nnot published\n", encoding="utf-8")
    (folder / "notes.txt").write_text("internal notes\n", encoding="utf-8")
    (folder / ".hidden.md").write_text("# Hidden\n\nhidden\n", encoding="utf-8")
    (folder / ".env").write_text("API_KEY=sk-secret\n", encoding="utf-8")
    return folder


def shown(pipeline: object, document: str) -> str:
    page = source_page(pipeline, document, 1, None)  # type: ignore[arg-type]
    return "".join(piece.text for piece in page.pieces)


def pipeline_file(folder: Path, path: str, extra: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / "desk.yaml"
    target.write_text(PIPELINE.format(path=path, extra=extra), encoding="utf-8")
    return target


@pytest.fixture
def inside(tmp_path: Path) -> Path:
    documents(tmp_path / "desk" / "docs")
    return pipeline_file(tmp_path / "desk", "docs")


@pytest.mark.parametrize(
    "document", ["drafts/secret.md", "notes.txt", ".hidden.md", ".env", "docs/../desk.yaml"]
)
def test_l1_a_file_the_corpus_does_not_take_is_not_shown(inside: Path, document: str) -> None:
    with pytest.raises(SourceNotFoundError):
        source_page(load_pipeline(inside), document, 1, None)


def test_a_document_of_the_corpus_is_shown(inside: Path) -> None:
    assert "git reset --soft" in shown(load_pipeline(inside), "guide.md")


def test_issue_31_f17_a_link_to_a_file_of_the_pipeline_outside_the_corpus_is_not_shown(
    tmp_path: Path,
) -> None:
    desk = tmp_path / "desk"
    documents(desk / "docs")
    (desk / "private.md").write_text("# Private\n\nthe operator's notes\n", encoding="utf-8")
    (desk / "docs" / "notes.md").symlink_to(desk / "private.md")
    pipeline = load_pipeline(pipeline_file(desk, "docs"))
    with pytest.raises(SourceNotFoundError):
        source_page(pipeline, "notes.md", 1, None)


def test_issue_22_a_corpus_of_symbolic_links_shows_its_sources(tmp_path: Path) -> None:
    elsewhere = documents(tmp_path / "git-doc")
    desk = tmp_path / "desk"
    desk.mkdir()
    (desk / "gitdoc").symlink_to(elsewhere, target_is_directory=True)
    pipeline = load_pipeline(pipeline_file(desk, "gitdoc", ", follow_symlinks: true"))
    assert "git reset --soft" in shown(pipeline, "guide.md")
    with pytest.raises(SourceNotFoundError):
        source_page(pipeline, "drafts/secret.md", 1, None)


@pytest.mark.parametrize("written", ["absolute", "home"])
def test_issue_22_a_corpus_may_name_a_folder_elsewhere_directly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, written: str
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    documents(tmp_path / "git-doc")
    path = str(tmp_path / "git-doc") if written == "absolute" else "~/git-doc"
    target = pipeline_file(tmp_path / "desk", path)
    assert [d for d in validate_file(target).diagnostics if d.severity.value == "error"] == []
    pipeline = load_pipeline(target)
    assert "git reset --soft" in shown(pipeline, "guide.md")
    for refused in (".env", "notes.txt", "../desk/desk.yaml"):
        with pytest.raises(SourceNotFoundError):
            source_page(pipeline, refused, 1, None)


def test_issue_22_a_missing_folder_elsewhere_is_reported(tmp_path: Path) -> None:
    target = pipeline_file(tmp_path / "desk", str(tmp_path / "nowhere"))
    [problem] = [d for d in validate_file(target).diagnostics if d.code == "R107"]
    assert "folder not found" in problem.message
