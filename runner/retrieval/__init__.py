"""Corpora on llama-index: pages, persisted BM25 indexes (vector / hybrid optional), neighbours.

Importing this package does not import llama-index; only building, loading and searching an
index does.
"""

from __future__ import annotations

from runner.retrieval.index import (
    CorpusIndex,
    IndexMissingError,
    IndexStatus,
    ScoredPage,
    corpus_loader,
    index_folder,
    open_corpus,
)
from runner.retrieval.pages import CorpusError, Page

__all__ = [
    "CorpusError",
    "CorpusIndex",
    "IndexMissingError",
    "IndexStatus",
    "Page",
    "ScoredPage",
    "corpus_loader",
    "index_folder",
    "open_corpus",
]
