"""Page vectors built by `runner index` beside the BM25 index: memory-mapped when opened,
re-embedded only for the pages that changed, searched by `mode: vector` and `hybrid`."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from runner.cli import main
from runner.config import load_pipeline
from runner.retrieval import open_corpus
from tests.embed.appliances import write


def embedded(path: Path) -> list[tuple[int, int]]:
    """The (done, total) reports of the embedding stage while the corpus opens."""
    reports: list[tuple[int, int]] = []

    def progress(stage: str, done: int, total: int) -> None:
        if stage == "embed":
            reports.append((done, total))

    open_corpus(load_pipeline(path), "manuals", progress=progress)
    return reports


def test_runner_index_stores_a_vector_per_page_beside_bm25(embedder, tmp_path: Path) -> None:
    path = write(tmp_path)
    result = CliRunner().invoke(main, ["index", str(path)])
    assert result.exit_code == 0, result.output
    index = open_corpus(load_pipeline(path), "manuals", build=False)
    stored = index.folder / "vectors" / "all-MiniLM-L6-v2" / "vectors.npy"
    assert np.load(stored).shape == (len(index), 384)


def test_runner_index_says_how_many_vectors_it_embedded(embedder, tmp_path: Path) -> None:
    path = write(tmp_path)
    first = CliRunner().invoke(main, ["index", str(path)]).output
    pages = len(open_corpus(load_pipeline(path), "manuals", build=False))
    assert f"{pages} vectors of all-MiniLM-L6-v2 ({pages} embedded now)" in first
    again = CliRunner().invoke(main, ["index", str(path), "--force"]).output
    assert f"{pages} vectors of all-MiniLM-L6-v2 (0 embedded now, {pages} kept)" in again


def test_an_up_to_date_index_that_gains_its_vectors_says_so(embedder, tmp_path: Path) -> None:
    path = write(tmp_path, embedding=None, mode="keyword")
    CliRunner().invoke(main, ["index", str(path)])
    path.write_text(path.read_text().replace("mode: keyword", "mode: hybrid"))
    output = CliRunner().invoke(main, ["index", str(path)]).output
    assert "up to date" in output
    assert "embedded now)" in output and " 0 embedded now" not in output


def test_an_opened_index_maps_its_vectors_instead_of_reading_them(embedder, tmp_path) -> None:
    path = write(tmp_path)
    open_corpus(load_pipeline(path), "manuals")
    reopened = open_corpus(load_pipeline(path), "manuals", build=False)
    assert not reopened.status.rebuilt
    assert isinstance(reopened.vectors.vectors.base, np.memmap)


def test_a_rebuild_embeds_only_the_pages_whose_text_changed(embedder, tmp_path: Path) -> None:
    path = write(tmp_path)
    [*_, (_, first)] = embedded(path)
    toaster = tmp_path / "manuals" / "toaster.md"
    toaster.write_text(toaster.read_text() + "\n## Crumbs\n\nEmpty the crumb tray weekly.\n")
    [*_, (_, again)] = embedded(path)
    index = open_corpus(load_pipeline(path), "manuals", build=False)
    assert first == len(index) - 1  # every page, before the new section
    assert again == 1  # the new section's page; the toaster's other pages kept their vectors


def test_vector_search_finds_a_page_in_the_user_s_words(embedder, tmp_path: Path) -> None:
    index = open_corpus(load_pipeline(write(tmp_path, mode="vector")), "manuals")
    assert index.keyword.top("get rid of chalky deposits", 3) == []  # no word in common
    [best, *_] = index.search("get rid of chalky deposits", 3, mode="vector")
    assert best.page.heading == "Descaling"


def test_hybrid_keeps_the_page_a_heading_worded_question_names_first(embedder, tmp_path) -> None:
    index = open_corpus(load_pipeline(write(tmp_path)), "manuals")
    [best, *_] = index.search("kettle warranty receipt", 3, mode="hybrid")
    assert (best.page.document, best.page.heading) == ("kettle.md", "Warranty")


def test_a_tool_in_hybrid_mode_gets_the_default_model_without_an_embedding_key(
    embedder, tmp_path: Path
) -> None:
    index = open_corpus(load_pipeline(write(tmp_path, embedding=None)), "manuals")
    assert index.vectors is not None and index.vectors.model == "all-MiniLM-L6-v2"


def test_with_no_build_a_missing_vector_index_says_how_to_build_it(embedder, tmp_path) -> None:
    from runner.retrieval import IndexMissingError

    path = write(tmp_path, embedding=None)
    plain = path.read_text().replace("mode: hybrid", "mode: keyword")
    path.write_text(plain)
    open_corpus(load_pipeline(path), "manuals")  # BM25 only
    path.write_text(plain.replace("mode: keyword", "mode: vector"))
    with pytest.raises(IndexMissingError, match="no vectors of all-MiniLM-L6-v2"):
        open_corpus(load_pipeline(path), "manuals", build=False)


def test_an_index_built_on_float32_weights_is_searched_with_float32_queries(
    embedder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from runner.embedding.models import RUNTIME_VARIABLE, load_embedder, onnx_installed

    if not onnx_installed():
        pytest.skip("the int8 runtime needs onnxruntime (make test-embed installs it)")
    path = write(tmp_path)
    monkeypatch.setenv(RUNTIME_VARIABLE, "numpy")
    built = open_corpus(load_pipeline(path), "manuals")
    assert built.vectors is not None and built.vectors.precision == "float32"
    monkeypatch.setenv(RUNTIME_VARIABLE, "onnx-int8")  # the default where onnxruntime is
    reopened = open_corpus(load_pipeline(path), "manuals", build=False)
    question = "how do I get rid of the chalky build-up inside my kettle?"
    float32 = load_embedder("all-MiniLM-L6-v2", "numpy").embed([question])[0]
    assert float(reopened.query_vector(question) @ float32) >= 0.99999
