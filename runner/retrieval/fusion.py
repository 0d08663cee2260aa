"""Hybrid search: BM25 and the page vectors, fused by normalised scores.

A page's hybrid score is 0.2 × its BM25 score over the query's best BM25 score + 0.8 × its
cosine with the question, over every page (both searches are exact). BM25's scores have no
fixed scale (they grow with the query's length and the rarity of its words): over the best
one, the best keyword match counts 1 and the others keep how far behind it they are, which
reciprocal-rank fusion throws away. The weights were chosen on the project's question sets
(bench/users.py; docs/retrieval.md has the study): of score fusion at 0.1 to 0.5, min-max
fusion, reciprocal-rank fusion (equal and weighted) and a BM25-then-cosine cascade, 0.2 is the
one that is never worse than the better of BM25 and the vectors on any set, and is the best or
within a question or two of it on each.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from runner.retrieval.vectors import best_rows

if TYPE_CHECKING:
    from runner.retrieval.keyword import KeywordIndex
    from runner.retrieval.vectors import VectorIndex

KEYWORD_WEIGHT = 0.2


def hybrid_top(
    keyword: KeywordIndex, vectors: VectorIndex, query: str, vector: np.ndarray, k: int
) -> list[tuple[int, float]]:
    """(page row, hybrid score) of the best k pages, best first, none at zero or below."""
    fused = (1.0 - KEYWORD_WEIGHT) * vectors.scores(vector)
    tokens = keyword.query_tokens(query)
    if tokens:
        bm25 = keyword.scores(tokens)
        best = float(bm25.max())
        if best > 0.0:
            fused = fused + KEYWORD_WEIGHT * (bm25 / best)
    return [(row, score) for row, score in best_rows(fused, k) if score > 0.0]
