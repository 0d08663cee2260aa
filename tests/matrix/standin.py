"""A stand-in for the embedding model, so that the configuration matrix runs in `make test`
without the `embed` extra: a bag of hashed words (as tests/retrieval/test_vectors.py embeds
pages), with a vector for each word too, which reranking compares (runner/retrieval/rerank.py).
It is a real embedder, if a crude one: pages that share the question's words are near it, so a
vector or hybrid search finds them and the gatekeeper's evidence is computed from real cosines.
The real model runs the same matrix under `make test-embed` (tests/embed/test_matrix.py)."""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import pytest

DIMENSIONS = 64
_WORD = re.compile(r"\w+")


@dataclass(frozen=True)
class Pieces:
    """A text's words as the reranker reads a model's pieces: one unit-length row a word."""

    vectors: np.ndarray
    words: list[str]


class WordBag:
    """Texts in, unit-length float32 rows out: each word adds 1 to a hashed dimension."""

    dimensions = DIMENSIONS
    precision = "float32"
    runtime = "numpy"

    def __init__(self, name: str) -> None:
        self.name = name  # the model the pipeline names: its vectors are stored under it

    def embed(
        self, texts: Sequence[str], progress: Callable[[int, int], None] | None = None
    ) -> np.ndarray:
        rows = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in _words(text):
                rows[row, _slot(word)] += 1.0
        if progress is not None:
            progress(len(texts), len(texts))
        return rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-9)

    def embed_pages(
        self,
        texts: Sequence[str],
        keep: Callable[[int, np.ndarray], None],
        progress: Callable[[int, int], None] | None = None,
    ) -> np.ndarray:
        """`embed`'s rows, and each text's word rows handed to `keep` (what an index keeps for
        reranking: runner/retrieval/page_tokens.py)."""
        for row, pieces in enumerate(self.token_vectors(texts)):
            keep(row, pieces.vectors)
        return self.embed(texts, progress)

    def question(self, text: str) -> tuple[np.ndarray, Pieces]:
        """A search's question: its row and its words, as the model gives them in one pass."""
        return self.embed([text])[0], self.token_vectors([text])[0]

    def token_vectors(self, texts: Sequence[str]) -> list[Pieces]:
        found = []
        for text in texts:
            words = _words(text) or ["."]
            vectors = np.zeros((len(words), DIMENSIONS), dtype=np.float32)
            for row, word in enumerate(words):
                vectors[row, _slot(word)] = 1.0
            found.append(Pieces(vectors, words))
        return found


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _slot(word: str) -> int:
    return zlib.crc32(word.encode()) % DIMENSIONS


@contextmanager
def standing_in(patch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every model a corpus names is the word bag while the block runs (in this process)."""
    import runner.embedding.models as models

    loaded: dict[str, WordBag] = {}

    def load_embedder(name: str, runtime: str | None = None) -> WordBag:
        return loaded.setdefault(name, WordBag(models.canonical(name)))

    with patch.context() as scoped:
        scoped.setattr(models, "load_embedder", load_embedder)
        yield
