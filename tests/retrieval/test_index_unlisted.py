"""Opening an index without listing its corpus folder (runner/retrieval/index.py): the manifest
records every folder's and file's stat data, and while they all hold (and the files are chosen
as before) the folder is not walked at all; any difference lists it as before."""

from __future__ import annotations

import os
import time
from dataclasses import replace
from pathlib import Path

import pytest

import runner.retrieval.manifests as manifests_module
from runner.retrieval import open_corpus

from .conftest import folder_pipeline

OLD = time.time() - 3600  # older than the timestamps the manifest refuses to trust


def aged(folder: Path) -> None:
    for here, names, files in os.walk(folder):
        for name in [*names, *files]:
            os.utime(os.path.join(here, name), (OLD, OLD))
    os.utime(folder, (OLD, OLD))


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    (folder / "guide").mkdir(parents=True)
    (folder / "guide" / "kettle.md").write_text("# Kettle\n\nDescale the kettle weekly.\n")
    (folder / "toaster.md").write_text("# Toaster\n\nEmpty the crumb tray.\n")
    aged(folder)
    return folder


@pytest.fixture
def listings(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The corpus folders listed (globbed) by open_corpus."""
    listed: list[Path] = []
    entries = manifests_module.corpus_entries

    def counted(folder, include, exclude=()):  # type: ignore[no-untyped-def]
        listed.append(folder)
        return entries(folder, include, exclude)

    monkeypatch.setattr(manifests_module, "corpus_entries", counted)
    return listed


def test_an_unchanged_corpus_is_opened_without_listing_its_folder(
    tmp_path: Path, docs: Path, listings: list[Path]
) -> None:
    pipeline = folder_pipeline(tmp_path, docs)
    open_corpus(pipeline, "docs")
    index = open_corpus(pipeline, "docs")
    assert listings == [docs]  # the build's listing only
    assert index.status.reason == "up to date"
    assert index.search("crumb tray", 1)[0].page.document == "toaster.md"


def test_a_document_added_in_a_subfolder_is_found(
    tmp_path: Path, docs: Path, listings: list[Path]
) -> None:
    pipeline = folder_pipeline(tmp_path, docs)
    open_corpus(pipeline, "docs")
    (docs / "guide" / "iron.md").write_text("# Iron\n\nFill the iron with water.\n")
    index = open_corpus(pipeline, "docs")
    assert index.status.reason == "stale (corpus changed)"
    assert index.search("iron water", 1)[0].page.document == "guide/iron.md"


def test_a_document_replaced_by_one_of_the_same_size_and_time_is_found(
    tmp_path: Path, docs: Path
) -> None:
    pipeline = folder_pipeline(tmp_path, docs)
    open_corpus(pipeline, "docs")
    kettle = docs / "guide" / "kettle.md"
    replacement = docs / "guide" / "new.tmp"
    replacement.write_text("# Kettle\n\nDescale the kettle yearly.\n")  # same length
    os.replace(replacement, kettle)  # a new inode
    os.utime(kettle, (OLD, OLD))
    os.utime(docs / "guide", (OLD, OLD))
    index = open_corpus(pipeline, "docs")
    assert index.status.reason == "stale (corpus changed)"
    assert "yearly" in index.search("descale", 1)[0].page.text


@pytest.mark.parametrize("name", ["toaster.md", "guide/kettle.md"])
def test_a_document_edited_in_place_at_the_top_or_in_a_subfolder_is_found(
    tmp_path: Path, docs: Path, listings: list[Path], name: str
) -> None:
    pipeline = folder_pipeline(tmp_path, docs)
    open_corpus(pipeline, "docs")
    with (docs / name).open("a", encoding="utf-8") as document:  # its folder's stat unchanged
        document.write("\nIt also plays a tune when done.\n")
    os.utime(docs / name, (OLD, OLD + 1))
    index = open_corpus(pipeline, "docs")
    assert listings == [docs, docs]  # the file's stat differs: the folder is listed again
    assert index.status.reason == "stale (corpus changed)"
    assert index.search("plays a tune", 1)[0].page.document == name


def test_a_changed_include_lists_the_folder_again(
    tmp_path: Path, docs: Path, listings: list[Path]
) -> None:
    pipeline = folder_pipeline(tmp_path, docs)
    open_corpus(pipeline, "docs")
    corpus = replace(pipeline.corpora["docs"], include=("guide/**",))
    narrowed = replace(pipeline, corpora={"docs": corpus})
    assert len(open_corpus(narrowed, "docs").pages()) == 1
    assert len(listings) == 2


def test_a_corpus_changed_just_now_is_listed_at_every_open(
    tmp_path: Path, docs: Path, listings: list[Path]
) -> None:
    # a timestamp is coarser than two quick writes: a folder changed just now proves nothing
    os.utime(docs / "guide")
    pipeline = folder_pipeline(tmp_path, docs)
    open_corpus(pipeline, "docs"), open_corpus(pipeline, "docs")
    assert len(listings) == 2
