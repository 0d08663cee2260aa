"""Corpus indexes: persistence, reload, incremental rebuilds, search and neighbours."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

import pytest

from runner.retrieval import CorpusError, IndexMissingError, index_folder, open_corpus

from .conftest import corpus_pipeline


@pytest.fixture
def pipeline(tmp_path: Path):
    return corpus_pipeline(tmp_path)


def corpus_dir(pipeline) -> Path:
    return pipeline.folder / "corpus" / "appliances"


def test_build_persists_the_index_in_the_state_folder(pipeline) -> None:
    index = open_corpus(pipeline, "manuals")
    folder = pipeline.folder / ".runner" / "indexes" / "manuals"
    assert index.status.rebuilt and index.status.reason == "missing"
    assert (folder / "manifest.json").is_file()
    assert (folder / "pages.sqlite").is_file()
    assert (folder / "bm25" / "params.json").is_file()
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["pages"] == len(index) == 11


def test_state_dir_setting_moves_the_indexes(pipeline, tmp_path: Path) -> None:
    moved = replace(pipeline, state_dir=tmp_path / "elsewhere")
    open_corpus(moved, "manuals")
    assert (tmp_path / "elsewhere" / "indexes" / "manuals" / "manifest.json").is_file()
    assert index_folder(moved, "manuals") == tmp_path / "elsewhere" / "indexes" / "manuals"


def test_reload_rebuilds_nothing_and_finds_the_same_pages(pipeline) -> None:
    built = open_corpus(pipeline, "manuals")
    loaded = open_corpus(pipeline, "manuals")
    assert not loaded.status.rebuilt and loaded.status.reason == "up to date"
    assert loaded.pages() == built.pages()
    assert [h.page for h in loaded.search("crumb tray", 2)] == [
        h.page for h in built.search("crumb tray", 2)
    ]


def test_touched_file_with_the_same_content_rebuilds_nothing(pipeline) -> None:
    open_corpus(pipeline, "manuals")
    kettle = corpus_dir(pipeline) / "kettle.md"
    os.utime(kettle, ns=(1, 1))
    assert not open_corpus(pipeline, "manuals").status.rebuilt
    manifest = json.loads((index_folder(pipeline, "manuals") / "manifest.json").read_text())
    assert manifest["files"]["kettle.md"][1] == 1  # the fast check knows the new mtime


def test_changed_file_rebuilds_and_is_searchable(pipeline) -> None:
    open_corpus(pipeline, "manuals")
    with (corpus_dir(pipeline) / "toaster.md").open("a") as file:
        file.write("\n## Bagels\n\nThe bagel button toasts one side only.\n")
    index = open_corpus(pipeline, "manuals")
    assert index.status.rebuilt and index.status.reason == "stale (corpus changed)"
    assert index.search("bagel", 1)[0].page.heading == "Bagels"


@pytest.mark.parametrize("change", ["add", "remove"])
def test_added_or_removed_file_rebuilds(pipeline, change: str) -> None:
    before = len(open_corpus(pipeline, "manuals"))
    if change == "add":
        (corpus_dir(pipeline) / "fridge.md").write_text("# Fridge\n\nKeep it at 5 degrees.\n")
    else:
        (corpus_dir(pipeline) / "notes.txt").unlink()
    index = open_corpus(pipeline, "manuals")
    assert index.status.rebuilt
    assert len(index) == before + (1 if change == "add" else -1)


def test_changed_page_size_rebuilds(pipeline) -> None:
    open_corpus(pipeline, "manuals")
    corpus = replace(pipeline.corpora["manuals"], max_words=15)
    index = open_corpus(replace(pipeline, corpora={"manuals": corpus}), "manuals")
    assert index.status.reason == "stale (page settings changed)"
    assert len(index) > 11
    markdown = [page for page in index.pages() if page.document.endswith(".md")]
    for page in markdown:  # headings come on top of a page's max_words
        body = [line for line in page.text.splitlines() if not line.startswith("#")]
        assert len(" ".join(body).split()) <= 15


def _with_globs(pipeline, **globs):
    corpus = replace(pipeline.corpora["manuals"], **globs)
    return replace(pipeline, corpora={"manuals": corpus})


def test_other_globs_that_select_the_same_files_rebuild_nothing(pipeline) -> None:
    open_corpus(pipeline, "manuals")  # the default include
    same = _with_globs(pipeline, include=("*.md", "*.rst", "*.txt"), exclude=("**/*.pdf",))
    assert open_corpus(same, "manuals").status.rebuilt is False


def test_globs_that_select_other_files_rebuild(pipeline) -> None:
    before = len(open_corpus(pipeline, "manuals"))
    fewer = _with_globs(pipeline, exclude=("notes.txt",))
    index = open_corpus(fewer, "manuals")
    assert index.status.reason == "stale (corpus changed)"
    assert len(index) == before - 1


def test_a_manifest_that_recorded_the_globs_opens_without_a_rebuild(pipeline) -> None:
    """Manifests written before `include` and `exclude` left the key kept them in settings."""
    open_corpus(pipeline, "manuals")
    manifest_file = index_folder(pipeline, "manuals") / "manifest.json"
    manifest = json.loads(manifest_file.read_text())
    manifest["settings"].update(include=["**/*.md", "**/*.txt", "**/*.rst"], exclude=[])
    manifest_file.write_text(json.dumps(manifest))
    assert open_corpus(pipeline, "manuals").status.rebuilt is False


def test_force_rebuilds_an_up_to_date_index(pipeline) -> None:
    open_corpus(pipeline, "manuals")
    assert open_corpus(pipeline, "manuals", force=True).status.reason == "forced"


def test_no_build_on_a_missing_index_fails_with_the_fix(pipeline) -> None:
    with pytest.raises(IndexMissingError) as raised:
        open_corpus(pipeline, "manuals", build=False)
    message = str(raised.value)
    assert "pipeline.yaml" in message and "'manuals'" in message and "is missing" in message
    assert "runner index" in message


def test_no_build_on_a_stale_index_fails(pipeline) -> None:
    open_corpus(pipeline, "manuals")
    (corpus_dir(pipeline) / "kettle.md").write_text("# Kettle\n\nNew text.\n")
    with pytest.raises(IndexMissingError, match="stale"):
        open_corpus(pipeline, "manuals", build=False)


def test_no_build_loads_an_up_to_date_index(pipeline) -> None:
    open_corpus(pipeline, "manuals")
    assert len(open_corpus(pipeline, "manuals", build=False)) == 11


def test_progress_reports_every_stage(pipeline) -> None:
    stages: list[tuple[str, int, int]] = []
    open_corpus(pipeline, "manuals", progress=lambda *event: stages.append(event))
    assert stages[:6] == [("read", n, 5) for n in range(6)]
    assert stages[-1] == ("save", 1, 1)


def test_missing_corpus_folder_names_the_pipeline_and_the_fix(pipeline) -> None:
    corpus = replace(pipeline.corpora["manuals"], path=Path("corpus/nowhere"))
    broken = replace(pipeline, corpora={"manuals": corpus})
    with pytest.raises(CorpusError) as raised:
        open_corpus(broken, "manuals")
    assert "pipeline.yaml" in str(raised.value)
    assert "corpora.manuals.path" in str(raised.value)


def test_corpus_without_documents_is_an_error(pipeline) -> None:
    corpus = replace(pipeline.corpora["manuals"], include=("**/*.html",))
    with pytest.raises(CorpusError, match="no text"):
        open_corpus(replace(pipeline, corpora={"manuals": corpus}), "manuals")


def test_unknown_corpus_lists_the_defined_ones(pipeline) -> None:
    with pytest.raises(CorpusError, match=r"no corpus named 'faq' \(corpora defined: manuals\)"):
        open_corpus(pipeline, "faq")


# --- search --------------------------------------------------------------------------------


def test_zero_score_hits_never_come_back(pipeline) -> None:
    index = open_corpus(pipeline, "manuals")
    hits = index.search("limescale", 10)  # bm25s would pad this to 10 with zero scores
    assert [h.page.node_id for h in hits] == ["kettle.md#3"]
    assert all(h.score > 0 for h in hits)


def test_query_without_indexed_terms_finds_nothing(pipeline) -> None:
    index = open_corpus(pipeline, "manuals")
    assert index.search("the and of", 5) == []
    assert index.search("xylophone", 5) == []
    assert index.match_count("xylophone") == 0


def test_match_count_counts_every_page_with_a_shared_term(pipeline) -> None:
    index = open_corpus(pipeline, "manuals")
    assert index.match_count("warranty") == 2
    assert len(index.search("warranty", 1)) == 1


def test_page_metadata_is_not_indexed(pipeline) -> None:
    # "zebra" is in the document path and the default title metadata, never in the text
    index = open_corpus(pipeline, "manuals")
    assert index.page("zebra-notes.md#1") is not None
    assert index.search("zebra", 5) == []


def test_hits_carry_their_source(pipeline) -> None:
    hit = open_corpus(pipeline, "manuals").search("crumb tray", 1)[0]
    source = hit.page.source
    assert (source.document, source.page, source.title, source.heading) == (
        "toaster.md",
        2,
        "Toaster Manual",
        "Crumb tray",
    )


# --- neighbours ------------------------------------------------------------------------------


def ids(pages) -> list[str]:
    return [page.node_id for page in pages]


def test_neighbors_within_the_window_in_page_order(pipeline) -> None:
    index = open_corpus(pipeline, "manuals")
    assert ids(index.neighbors("kettle.md#2", 1)) == ["kettle.md#1", "kettle.md#3"]
    assert ids(index.neighbors("kettle.md#3", 2)) == ["kettle.md#1", "kettle.md#2", "kettle.md#4"]


def test_neighbors_stop_at_document_boundaries(pipeline) -> None:
    index = open_corpus(pipeline, "manuals")
    # kettle.md's last page is followed by notes.txt and toaster.md in corpus order
    assert ids(index.neighbors("kettle.md#4", 2)) == ["kettle.md#2", "kettle.md#3"]
    assert ids(index.neighbors("toaster.md#1", 1)) == ["toaster.md#2"]
    assert ids(index.neighbors("notes.txt#1", 3)) == []


def test_neighbors_survive_a_reload(pipeline) -> None:
    open_corpus(pipeline, "manuals")
    loaded = open_corpus(pipeline, "manuals")
    assert ids(loaded.neighbors("toaster.md#2", 1)) == ["toaster.md#1", "toaster.md#3"]


def test_neighbors_of_an_unknown_page_are_none(pipeline) -> None:
    assert open_corpus(pipeline, "manuals").neighbors("gone.md#1", 1) == []


# --- vector and hybrid (the `embed` extra; with the real model: tests/embed) ------------------


def test_vector_mode_on_a_corpus_without_vectors_says_how_to_get_them(pipeline) -> None:
    with pytest.raises(CorpusError, match=r"embedding: \{model: all-MiniLM-L6-v2\}"):
        open_corpus(pipeline, "manuals").search("kettle", 2, mode="vector")
