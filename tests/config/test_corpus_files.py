"""Which files a corpus holds (runner.config.corpus_files): the default include reads every
format runner reads, and `exclude` globs mean what `include` globs mean."""

from __future__ import annotations

from pathlib import Path

import pytest

from runner.config.corpus_files import DEFAULT_INCLUDE, corpus_entries, excluded


def _files(folder: Path, *names: str) -> None:
    for name in names:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(b"x")


def _listed(folder: Path, include=DEFAULT_INCLUDE, exclude=()) -> list[str]:
    return [relative for relative, _ in corpus_entries(folder, include, exclude)]


def test_the_default_include_lists_every_format_runner_reads(tmp_path: Path) -> None:
    names = ["a.md", "b.markdown", "c.rst", "d.rst.txt", "e.txt", "f.html", "g.htm", "h.pdf"]
    _files(tmp_path, *names, "deep/i.xhtml", "logo.png", "data.csv", ".hidden/j.md", ".k.md")
    assert _listed(tmp_path) == sorted([*names, "deep/i.xhtml"])


@pytest.mark.parametrize(
    ("pattern", "path", "expected"),
    [
        ("drafts/**", "drafts/next.md", True),
        ("drafts/**", "drafts/2024/next.md", True),  # `**` spans folders, as in `include`
        ("drafts/**", "manual/drafts/next.md", False),  # anchored at the corpus folder
        ("drafts/", "drafts/2024/next.md", True),  # a folder: everything below it
        ("**/drafts/", "manual/drafts/next.md", True),
        ("drafts/*.md", "manual/drafts/next.md", False),
        ("*.md", "sub/a.md", False),  # `*` stays within one name
        ("**/genindex.html", "genindex.html", True),  # `**/` also matches at the top
        ("**/genindex.html", "a/b/genindex.html", True),
        ("site/*/index.html", "site/v1/index.html", True),
        ("site/*/index.html", "site/v1/x/index.html", False),
        ("page?.md", "page1.md", True),
        ("page[!0-9].md", "page1.md", False),
        ("page[0-9].md", "page1.md", True),
    ],
)
def test_an_exclude_glob_matches_as_an_include_glob_would(pattern, path, expected) -> None:
    assert excluded(path, [pattern]) is expected


def test_an_include_glob_ending_in_a_slash_reads_the_folder(tmp_path: Path) -> None:
    _files(tmp_path, "guide.md", "manual/a.md", "manual/deep/b.pdf")
    assert _listed(tmp_path, include=("manual/",)) == ["manual/a.md", "manual/deep/b.pdf"]


def test_exclude_leaves_out_what_include_matched(tmp_path: Path) -> None:
    _files(tmp_path, "guide.md", "drafts/2024/next.md", "site/genindex.html", "site/faq.html")
    listed = _listed(tmp_path, exclude=("drafts/**", "**/genindex.html"))
    assert listed == ["guide.md", "site/faq.html"]


def test_validation_counts_the_documents_below_a_double_star_include(tmp_path: Path) -> None:
    from runner.config import validate_file

    _files(tmp_path, "docs/manual/a.md")
    pipeline = tmp_path / "p.yaml"
    pipeline.write_text(
        "domain: d\ncorpora:\n  docs: {path: docs, include: ['manual/**']}\ntools:\n"
        "  - {name: rag, kind: retrieve, corpus: docs}\n",
        encoding="utf-8",
    )
    assert [d.code for d in validate_file(pipeline).diagnostics] == []  # no R122
