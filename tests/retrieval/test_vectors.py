"""The page-vector store (runner/retrieval/vectors.py) with any embedder: here a bag of hashed
words, so that storage, reuse and exact search are checked without the `embed` extra (the real
model: tests/embed)."""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest

from runner.retrieval.pages import Page
from runner.retrieval.places import place_text
from runner.retrieval.vectors import VectorIndex, build_vectors, embedded_text, model_folder


class WordBag:
    """A real, if crude, embedder: each word adds 1 to a hashed dimension; rows of unit length."""

    name = "word-bag"
    dimensions = 32

    def __init__(self, precision: str = "float32") -> None:
        self.embedded: list[str] = []
        self.precision = precision

    def embed(
        self, texts: Sequence[str], progress: Callable[[int, int], None] | None = None
    ) -> np.ndarray:
        self.embedded += texts
        rows = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                rows[row, zlib.crc32(word.encode()) % self.dimensions] += 1.0
        return rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-9)

    def embed_pages(
        self,
        texts: Sequence[str],
        keep: Callable[[int, np.ndarray], None],
        progress: Callable[[int, int], None] | None = None,
    ) -> np.ndarray:
        """Each word is a piece: its row is the one-word text's vector; handed over last
        text first, as batches may finish in any order."""
        for row in reversed(range(len(texts))):
            keep(row, self.word_rows(texts[row].lower().split()))
        return self.embed(texts, progress)

    def word_rows(self, words: list[str]) -> np.ndarray:
        rows = np.zeros((len(words), self.dimensions), dtype=np.float32)
        for row, word in enumerate(words):
            rows[row, zlib.crc32(word.encode()) % self.dimensions] = 1.0
        return rows


def page(number: int, text: str, document: str = "a.md") -> Page:
    return Page(f"{document}#{number}", document, number, "A", "Section", text)


PAGES = [page(1, "kettle boils water"), page(2, "toaster browns bread"), page(3, "fridge cools")]


def test_the_vectors_are_stored_one_row_per_page_and_mapped_when_loaded(tmp_path: Path) -> None:
    build_vectors(PAGES, WordBag(), tmp_path)
    loaded = VectorIndex.load(tmp_path, "word-bag")
    assert loaded is not None and len(loaded) == 3
    assert isinstance(loaded.vectors.base, np.memmap)  # read as searched, not whole
    assert loaded.matches(PAGES)


def test_vectors_of_another_model_are_not_loaded(tmp_path: Path) -> None:
    build_vectors(PAGES, WordBag(), tmp_path)
    assert VectorIndex.load(tmp_path, "another-model") is None


def test_a_rebuild_embeds_only_the_pages_whose_text_is_new(tmp_path: Path) -> None:
    first, _ = build_vectors(PAGES, WordBag(), tmp_path / "one")
    changed = [PAGES[0], page(2, "toaster burns bread"), PAGES[2], page(4, "oven bakes")]
    embedder = WordBag()
    rebuilt, fresh = build_vectors(changed, embedder, tmp_path / "two", previous=first)
    assert fresh == 2 and embedder.embedded == [embedded_text(p) for p in changed[1::2]]
    assert np.array_equal(rebuilt.vectors[2], first.vectors[2])  # kept, moved to its new row


def test_search_is_exact_nearest_first(tmp_path: Path) -> None:
    vectors, _ = build_vectors(PAGES, WordBag(), tmp_path)
    query = WordBag().embed(["bread toaster"])[0]
    hits = vectors.top(query, 3)
    assert hits[0][0] == 1
    scores = [score for _, score in hits]
    assert scores == sorted(scores, reverse=True)
    assert np.isclose(scores[0], float(vectors.vectors[1] @ query))


def test_the_embedded_text_carries_the_page_s_place(tmp_path: Path) -> None:
    assert embedded_text(PAGES[0]) == "A › Section\nkettle boils water"


def test_the_vectors_record_the_precision_of_the_weights_that_made_them(tmp_path: Path) -> None:
    build_vectors(PAGES, WordBag("int8"), tmp_path)
    loaded = VectorIndex.load(tmp_path, "word-bag")
    assert loaded is not None and loaded.precision == "int8"


def test_vectors_stored_before_precisions_were_recorded_are_float32(tmp_path: Path) -> None:
    build_vectors(PAGES, WordBag(), tmp_path)
    stored = model_folder(tmp_path, "word-bag") / "model.json"
    record = json.loads(stored.read_text())
    del record["precision"]
    stored.write_text(json.dumps(record))
    loaded = VectorIndex.load(tmp_path, "word-bag")
    assert loaded is not None and loaded.precision == "float32"


def test_a_rebuild_on_weights_of_another_precision_embeds_every_page_anew(tmp_path: Path) -> None:
    first, _ = build_vectors(PAGES, WordBag("float32"), tmp_path / "one")
    embedder = WordBag("int8")
    rebuilt, fresh = build_vectors(PAGES, embedder, tmp_path / "two", previous=first)
    assert fresh == len(PAGES) and rebuilt.precision == "int8"


def test_each_page_keeps_its_word_pieces_for_reranking(tmp_path: Path) -> None:
    build_vectors(PAGES, WordBag(), tmp_path)
    loaded = VectorIndex.load(tmp_path, "word-bag")
    assert loaded is not None and loaded.tokens is not None
    for row, kept in enumerate(PAGES):
        expected = WordBag().word_rows(embedded_text(kept).lower().split())
        assert np.allclose(loaded.tokens.page(row), expected, atol=0.01)


def test_a_rebuild_keeps_the_word_pieces_of_the_pages_it_does_not_embed(tmp_path: Path) -> None:
    first, _ = build_vectors(PAGES, WordBag(), tmp_path / "one")
    changed = [page(4, "oven bakes"), *PAGES]
    rebuilt, fresh = build_vectors(changed, WordBag(), tmp_path / "two", previous=first)
    assert fresh == 1 and first.tokens is not None and rebuilt.tokens is not None
    for row in range(3):
        assert np.array_equal(rebuilt.tokens.page(row + 1), first.tokens.page(row))


def test_vectors_without_word_pieces_are_all_embedded_again(tmp_path: Path) -> None:
    first, _ = build_vectors(PAGES, WordBag(), tmp_path / "one")
    first.tokens = None  # as an index built before the pieces were kept
    embedder = WordBag()
    _, fresh = build_vectors(PAGES, embedder, tmp_path / "two", previous=first)
    assert fresh == 3


def test_without_pieces_no_word_piece_is_stored(tmp_path: Path) -> None:
    build_vectors(PAGES, WordBag(), tmp_path)
    build_vectors(PAGES, WordBag(), tmp_path, pieces=False)  # the same folder, rebuilt
    loaded = VectorIndex.load(tmp_path, "word-bag")
    assert loaded is not None and loaded.tokens is None
    assert not list(model_folder(tmp_path, "word-bag").glob("token*.npy"))


def test_each_page_keeps_the_vector_of_its_place_for_reranking(tmp_path: Path) -> None:
    pages = [page(1, "kettle boils water"), Page("b.md#1", "b.md", 1, "B", "Toasters", "bread")]
    build_vectors(pages, WordBag(), tmp_path)
    loaded = VectorIndex.load(tmp_path, "word-bag")
    assert loaded is not None and loaded.places is not None
    assert np.allclose(loaded.places, WordBag().embed(["A › Section", "B › Toasters"]))
    query = WordBag().embed(["toasters"])[0]
    cosines = loaded.place_cosines([1, 0], query)
    assert cosines is not None and cosines[0] > cosines[1]


def test_pages_of_one_section_have_their_place_embedded_once(tmp_path: Path) -> None:
    embedder = WordBag()
    build_vectors(PAGES, embedder, tmp_path)
    assert embedder.embedded.count(place_text(PAGES[0])) == 1


def test_a_rebuild_embeds_only_the_places_it_does_not_know(tmp_path: Path) -> None:
    first, _ = build_vectors(PAGES, WordBag(), tmp_path / "one")
    moved = Page("c.md#1", "c.md", 1, "C", "Ovens", "oven bakes")
    embedder = WordBag()
    build_vectors([*PAGES, moved], embedder, tmp_path / "two", previous=first)
    assert embedder.embedded == [embedded_text(moved), "C › Ovens"]


def test_without_pieces_no_place_vector_is_stored(tmp_path: Path) -> None:
    build_vectors(PAGES, WordBag(), tmp_path)
    build_vectors(PAGES, WordBag(), tmp_path, pieces=False)
    loaded = VectorIndex.load(tmp_path, "word-bag")
    assert loaded is not None and loaded.places is None
    assert loaded.place_cosines([0], WordBag().embed(["kettle"])[0]) is None


def test_blas_is_held_to_one_thread_from_the_first_search_product_on() -> None:
    threadpoolctl = pytest.importorskip("threadpoolctl")
    from runner.retrieval.blas import one_blas_thread

    with one_blas_thread():
        pass
    blas = threadpoolctl.threadpool_info()
    assert all(pool["num_threads"] == 1 for pool in blas if pool["user_api"] == "blas")
