"""Each page's place vector (its title and heading embedded alone, runner/retrieval/places.py):
kept by the index beside the page vectors and handed to the rerank with the question's cosine."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from runner.retrieval import open_corpus
from runner.retrieval.places import PLACES_FILE
from runner.retrieval.vectors import EMBEDDED_TEXT, model_folder

from .conftest import folder_pipeline
from .test_vectors import WordBag


class AskedWordBag(WordBag):
    """The word bag, also giving a question's vector and word pieces as a search asks them."""

    def question(self, text: str) -> tuple[np.ndarray, Any]:
        words = text.lower().split()
        return self.embed([text])[0], SimpleNamespace(vectors=self.word_rows(words), words=words)


@pytest.fixture
def lamps(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, AskedWordBag]:
    folder = tmp_path / "docs"
    folder.mkdir()
    sections = ["Wicks", "Trimming the wick", "Lamp oil", "Glass chimneys"]
    text = "\n\n".join(f"## {name}\n\nThe lamp burns {name.lower()} slowly." for name in sections)
    (folder / "lamp.md").write_text(f"# Lamps\n\n{text}\n", "utf-8")
    embedder = AskedWordBag()
    monkeypatch.setattr("runner.embedding.models.load_embedder", lambda *args: embedder)
    monkeypatch.setattr("runner.retrieval.index.vector_model", lambda pipeline, corpus: "word-bag")
    # the stand-in model runs here, though it is no model runner carries (words_alone.py)
    monkeypatch.setattr(
        "runner.retrieval.index.runnable_model", lambda corpus, model: (model, None)
    )
    return folder_pipeline(tmp_path, folder), embedder


def test_vectors_from_before_the_places_gain_them_without_embedding_a_page_again(
    lamps: tuple[Any, AskedWordBag], monkeypatch: pytest.MonkeyPatch
) -> None:
    pipeline, embedder = lamps
    with monkeypatch.context() as older:
        older.setattr("runner.retrieval.vectors.EMBEDDED_TEXT", EMBEDDED_TEXT - 1)
        index = open_corpus(pipeline, "docs")
    (model_folder(index.folder, "word-bag") / PLACES_FILE).unlink()
    pages = len(embedder.embedded)
    embedder.embedded.clear()

    index = open_corpus(pipeline, "docs")
    assert index.vectors is not None and index.vectors.places is not None
    assert embedder.embedded and all(" › " in text for text in embedder.embedded)
    assert len(embedder.embedded) < pages  # the places only, not the pages' texts


def test_a_reranked_search_hands_the_rerank_its_candidates_place_cosines(
    lamps: tuple[Any, AskedWordBag], monkeypatch: pytest.MonkeyPatch
) -> None:
    from runner.retrieval import rerank

    pipeline, _ = lamps
    index = open_corpus(pipeline, "docs")
    handed: list[Any] = []
    original = rerank.reranked

    def spy(*args: Any) -> list[tuple[int, float]]:
        handed.append(args[-1])
        return original(*args)

    monkeypatch.setattr(rerank, "reranked", spy)
    found = index.search("trimming the wick", 4, mode="hybrid")
    assert found and handed and handed[0] is not None
    assert len(handed[0]) >= len(found)  # one cosine a candidate
