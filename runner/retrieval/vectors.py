"""Embedding search: a corpus's page vectors, beside its BM25 index, memory-mapped.

`vectors/<model>/` in the index folder holds `vectors.npy` (float32, one unit-length row per
page, in page-store order), `keys.npy` (per row, a digest of the model and the embedded text),
`model.json`, and for reranking each page's word-piece vectors (page_tokens.py) and the vector
of its place (places.py). Opening maps
the two arrays (`numpy.load(mmap_mode="r")`): nothing is read until a search, whose cost is one
matrix-vector product over the rows (exact search; 100k pages of 384 dimensions is 150 MB and
tens of milliseconds: bench/README.md).

A rebuild embeds only what changed: a row whose key the previous vectors hold is copied from
them, so editing one document re-embeds its pages alone, and the pages of a document that did
not change keep their vectors even when the BM25 index is rebuilt around them.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import BinaryIO, Protocol

import numpy as np

from runner.embedding.catalog import is_remote
from runner.retrieval.blas import one_blas_thread
from runner.retrieval.lead import lead_text
from runner.retrieval.mapped import mapped
from runner.retrieval.page_tokens import PageTokens, PieceWriter, remove_pieces
from runner.retrieval.pages import Page
from runner.retrieval.places import build_places, load_places, place_text, remove_places
from runner.retrieval.readers import CorpusError

VECTORS_FOLDER = "vectors"
VECTORS_FILE = "vectors.npy"
KEYS_FILE = "keys.npy"
MODEL_FILE = "model.json"
_KEY_BYTES = 16


class PageEmbedder(Protocol):
    """What building and searching vectors needs of a model (runner.embedding.Embedder)."""

    name: str

    @property
    def dimensions(self) -> int: ...

    @property
    def precision(self) -> str: ...  # the weights it computes with: "float32", "int8"

    def embed(
        self, texts: Sequence[str], progress: Callable[[int, int], None] | None = None
    ) -> np.ndarray: ...

    def embed_pages(
        self,
        texts: Sequence[str],
        keep: Callable[[int, np.ndarray], None],
        progress: Callable[[int, int], None] | None = None,
    ) -> np.ndarray: ...  # the vectors; each text's piece vectors handed to keep(index, rows)


# what `embedded_text` makes of a page; a change re-embeds every page of an index, even one
# whose BM25 index is up to date (1: place and text; 2: place and lead text, lead.py; 3: the
# place's own vector too, places.py: the pages' rows are kept, their places embedded)
EMBEDDED_TEXT = 3


def embedded_text(page: Page) -> str:
    """What a page's vector (and the word pieces reranking reads) is of: its place (title and
    heading) and its text from its first prose on, the boilerplate a reference page opens with
    left out (lead.py)."""
    place = place_text(page)
    text = lead_text(page.text)
    return f"{place}\n{text}" if place else text


def model_folder(index_folder: Path, model: str) -> Path:
    # a service's identity (`openai_like:MODEL@API_BASE`) whole: its last path part is the API's
    named = model if "://" in model or is_remote(model) else Path(model).name or model
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", named).strip("_") or "model"
    return index_folder / VECTORS_FOLDER / slug


def _keys(model: str, texts: Sequence[str]) -> np.ndarray:
    digests = [
        hashlib.blake2b(f"{model}\0{text}".encode(), digest_size=_KEY_BYTES).digest()
        for text in texts
    ]
    return np.array(digests, dtype=f"S{_KEY_BYTES}")


class VectorIndex:
    """A corpus's page vectors for one model; searched exactly."""

    def __init__(
        self,
        model: str,
        vectors: np.ndarray,
        keys: np.ndarray,
        precision: str = "float32",
        tokens: PageTokens | None = None,
        text: int = EMBEDDED_TEXT,
        places: np.ndarray | None = None,
    ) -> None:
        self.model = model
        self.vectors = vectors
        self.keys = keys
        self.precision = precision  # of the weights that made them; queries must match it
        self.tokens = tokens  # each page's word-piece vectors, for reranking (page_tokens.py)
        self.text = text  # the `EMBEDDED_TEXT` they were made of: another is out of date
        self.places = places  # each page's place vector, for reranking (places.py)

    def __len__(self) -> int:
        return int(self.vectors.shape[0])

    @property
    def current(self) -> bool:
        """Whether they are of the text runner embeds a page by now (`EMBEDDED_TEXT`)."""
        return self.text == EMBEDDED_TEXT

    @classmethod
    def load(cls, index_folder: Path, model: str) -> VectorIndex | None:
        """The stored vectors of this model, memory-mapped; None when there are none."""
        folder = model_folder(index_folder, model)
        try:
            stored = json.loads((folder / MODEL_FILE).read_text(encoding="utf-8"))
            if stored.get("model") != model:
                return None
            vectors = mapped(folder / VECTORS_FILE)
            keys = mapped(folder / KEYS_FILE)
        except (OSError, ValueError):
            return None
        if vectors.ndim != 2 or len(keys) != len(vectors):
            return None
        tokens = PageTokens.load(folder, len(vectors))
        places = load_places(folder, len(vectors))
        # vectors from before the runtimes were recorded were all made with float32 weights,
        # those from before the embedded text was recorded of its first form
        precision = str(stored.get("precision", "float32"))
        text = int(stored.get("text", 1))
        return cls(model, vectors, keys, precision, tokens, text, places)

    def matches(self, pages: Sequence[Page]) -> bool:
        """Whether these vectors are those of exactly these pages, in this order."""
        if len(pages) != len(self):
            return False
        return bool(np.array_equal(_keys(self.model, [embedded_text(p) for p in pages]), self.keys))

    def scores(self, query: np.ndarray) -> np.ndarray:
        """The cosine of every page with the query vector (unit length), by row."""
        self._same_model(query)
        with one_blas_thread():  # a matrix-vector product: BLAS's threads cost more (blas.py)
            return np.asarray(self.vectors @ query.astype(np.float32), dtype=np.float32)

    def cosine(self, row: int, query: np.ndarray) -> float:
        """The cosine of one page (by row) with the query vector (unit length)."""
        self._same_model(query)
        return float(self.vectors[row] @ query.astype(np.float32))

    def place_cosines(self, rows: Sequence[int], query: np.ndarray) -> np.ndarray | None:
        """The cosine of each page's place (by row) with the query vector; None when the
        index keeps no place vectors."""
        if self.places is None:
            return None
        self._same_model(query)
        return np.asarray(self.places[list(rows)] @ query.astype(np.float32), dtype=np.float64)

    def _same_model(self, query: np.ndarray) -> None:
        """A query of other dimensions than the pages' is refused: the model behind the name
        changed (a service now serving another), and its vectors cannot be compared."""
        if query.shape[-1] != self.vectors.shape[1]:
            raise CorpusError(
                f"the question's vector has {query.shape[-1]} dimensions and the index's "
                f"vectors of {self.model} have {self.vectors.shape[1]}: the model behind the "
                "name changed since `runner index`; rebuild them with `runner index --force`"
            )

    def top(self, query: np.ndarray, k: int) -> list[tuple[int, float]]:
        """(row, cosine) of the k nearest pages, nearest first."""
        return best_rows(self.scores(query), k)


def best_rows(scores: np.ndarray, k: int) -> list[tuple[int, float]]:
    """(row, score) of the k highest scores, highest first (ties in row order)."""
    k = min(k, len(scores))
    if k < 1:
        return []
    best = np.argpartition(-scores, k - 1)[:k]
    best = best[np.argsort(-scores[best], kind="stable")]
    return [(int(row), float(scores[row])) for row in best]


def build_vectors(
    pages: Sequence[Page],
    embedder: PageEmbedder,
    index_folder: Path,
    previous: VectorIndex | None = None,
    progress: Callable[[int, int], None] | None = None,
    *,
    pieces: bool = True,
) -> tuple[VectorIndex, int]:
    """The pages' vectors written under `index_folder` (reusing `previous`'s rows whose key is
    unchanged), and how many pages were embedded anew; with `pieces`, each page's word pieces
    and place vector too (page_tokens.py, places.py: for reranking; a corpus with `rerank: 0`
    keeps neither)."""
    texts = [embedded_text(page) for page in pages]
    keys = _keys(embedder.name, texts)
    vectors = np.zeros((len(texts), embedder.dimensions), dtype=np.float32)
    known: dict[bytes, int] = {}
    if (
        previous is not None
        and (previous.tokens is not None or not pieces)  # no pieces to reuse: all anew
        and previous.vectors.shape[1] == embedder.dimensions
        and previous.precision == embedder.precision  # never one index of two precisions
    ):
        known = {bytes(key): row for row, key in enumerate(previous.keys)}
    folder = model_folder(index_folder, embedder.name)
    folder.mkdir(parents=True, exist_ok=True)
    writer = PieceWriter(folder, len(texts), embedder.dimensions) if pieces else None
    fresh = []
    kept_places: dict[int, np.ndarray] = {}  # an unchanged page's place: the same text's
    for row, key in enumerate(keys):
        old = known.get(bytes(key))
        if old is None:
            fresh.append(row)
        else:
            assert previous is not None
            vectors[row] = previous.vectors[old]
            if writer is not None:
                assert previous.tokens is not None
                writer.add(row, *previous.tokens.raw(old))
                if previous.places is not None:
                    kept_places[row] = previous.places[old]
    started = time.perf_counter()
    try:
        if fresh and writer is not None:
            vectors[fresh] = embedder.embed_pages(
                [texts[row] for row in fresh],
                lambda done, rows: writer.add_vectors(fresh[done], rows),
                progress=progress,
            )
        elif fresh:
            vectors[fresh] = embedder.embed([texts[row] for row in fresh], progress=progress)
        places = None
        if writer is not None:
            places = build_places(pages, embedder.embed, folder, embedder.dimensions, kept_places)
    except BaseException:
        if writer is not None:
            writer.discard()
        raise
    seconds = time.perf_counter() - started
    if writer is not None:
        writer.finish()
    else:
        remove_pieces(folder)
        remove_places(folder)
    model = {
        "model": embedder.name,
        # who made them: a service's provider, else runner's own forward pass
        "provider": embedder.name.partition(":")[0] if is_remote(embedder.name) else "runner",
        "dimensions": embedder.dimensions,
        "precision": embedder.precision,
        "text": EMBEDDED_TEXT,
        "pages": len(texts),
        "embedded": len(fresh),  # by the last build; the others were kept
        "embed_seconds": round(seconds, 2),
    }
    # each file replaced whole: a search that has the old ones mapped keeps reading them
    _replace(folder / VECTORS_FILE, lambda file: np.save(file, vectors))
    _replace(folder / KEYS_FILE, lambda file: np.save(file, keys))
    _replace(folder / MODEL_FILE, lambda file: file.write(json.dumps(model).encode()))
    stored = PageTokens.load(folder, len(texts))
    on_disk = mapped(folder / VECTORS_FILE)
    made = VectorIndex(embedder.name, on_disk, keys, embedder.precision, stored, places=places)
    return made, len(fresh)


def _replace(path: Path, write: Callable[[BinaryIO], object]) -> None:
    temporary = path.with_name(f".{path.name}.tmp")
    with temporary.open("wb") as file:
        write(file)
    os.replace(temporary, path)
