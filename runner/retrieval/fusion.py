"""Hybrid search: BM25 and the page vectors, fused.

Provisional: normalised score fusion (BM25 divided by the query's best BM25 score, cosine as
is), weighted. The weights are chosen on the project's question sets (docs/retrieval.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from runner.retrieval.vectors import best_rows

if TYPE_CHECKING:
    from runner.retrieval.keyword import KeywordIndex
    from runner.retrieval.vectors import VectorIndex

KEYWORD_WEIGHT = 0.3


def hybrid_top(
    keyword: KeywordIndex, vectors: VectorIndex, query: str, vector: np.ndarray, k: int
) -> list[tuple[int, float]]:
    cosine = vectors.scores(vector)
    fused = (1.0 - KEYWORD_WEIGHT) * cosine
    tokens = keyword.query_tokens(query)
    if tokens:
        bm25 = keyword.bm25.get_scores(tokens)
        best = float(bm25.max())
        if best > 0.0:
            fused = fused + KEYWORD_WEIGHT * (bm25 / best)
    return [(row, score) for row, score in best_rows(fused, k) if score > 0.0]
