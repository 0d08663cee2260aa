"""The rankings compared on the question sets: BM25, BM25 with pseudo-relevance feedback (RM3),
the page vectors alone, ways of fusing the two, and fusion with feedback on the question's
vector (the study behind runner's hybrid search: docs/retrieval.md). Each takes a query's full
score arrays (every page's BM25 score and cosine, or the vectors to compute it) and returns
page rows, best first."""

from __future__ import annotations

import heapq
from collections import Counter, defaultdict
from collections.abc import Callable, Hashable, Mapping
from operator import itemgetter
from typing import Any, TypeVar

import numpy as np

TOP = 10
RRF_K = 60
POOL = 100  # pages of each list a rank fusion sees


def best(scores: np.ndarray, k: int = TOP) -> list[int]:
    k = min(k, len(scores))
    top = np.argpartition(-scores, k - 1)[:k]
    top = top[np.argsort(-scores[top], kind="stable")]
    return [int(row) for row in top if scores[row] > -np.inf]


def bm25_scores(keyword: Any, query: str) -> np.ndarray:
    tokens = keyword.query_tokens(query)
    if not tokens:
        return np.zeros(keyword.page_count, dtype=np.float32)
    return np.asarray(keyword.scores(tokens), dtype=np.float32)


def rm3_scores(
    keyword: Any,
    page_text: Callable[[int], str],
    query: str,
    first: np.ndarray,
    *,
    documents: int = 10,
    terms: int = 10,
    original_weight: float = 0.5,
) -> np.ndarray:
    """RM3: the terms of the first pass's top pages, weighted by the pages' scores (a relevance
    model), interpolated with the query's own terms, searched again."""
    original = keyword.query_tokens(query)
    top = [row for row in best(first, documents) if first[row] > 0]
    if not original or not top:
        return first
    weights: defaultdict[str, float] = defaultdict(float)
    total = float(sum(first[row] for row in top))
    for row in top:
        tokens = keyword.query_tokens(page_text(row))
        if not tokens:
            continue
        counts = Counter(tokens)
        for token, count in counts.items():
            weights[token] += (count / len(tokens)) * float(first[row]) / total
    expansion = [(t, w) for t, w in _largest(weights, terms + len(original)) if t not in original]
    expansion = expansion[:terms]
    scores = np.zeros_like(first)
    for token in set(original):
        scores += original_weight / len(set(original)) * bm25_scores(keyword, token)
    mass = sum(w for _, w in expansion) or 1.0
    for token, weight in expansion:
        scores += (1 - original_weight) * weight / mass * bm25_scores(keyword, token)
    return scores


def ranks(scores: np.ndarray, pool: int = POOL) -> dict[int, int]:
    """Rank (from 1) of each of the best `pool` pages with a positive score."""
    return {row: rank for rank, row in enumerate(best(scores, pool), 1) if scores[row] > 0}


def rrf(bm25: np.ndarray, cosine: np.ndarray, keyword_weight: float = 0.5) -> list[int]:
    fused: defaultdict[int, float] = defaultdict(float)
    for row, rank in ranks(bm25).items():
        fused[row] += keyword_weight / (RRF_K + rank)
    for row, rank in ranks(cosine).items():
        fused[row] += (1 - keyword_weight) / (RRF_K + rank)
    return [row for row, _ in _largest(fused, TOP)]


def score_fusion(bm25: np.ndarray, cosine: np.ndarray, keyword_weight: float) -> list[int]:
    """BM25 over the query's best BM25 score, beside the cosine as it is."""
    peak = float(bm25.max())
    keyword = bm25 / peak if peak > 0 else bm25
    return best(keyword_weight * keyword + (1 - keyword_weight) * cosine)


def minmax_fusion(bm25: np.ndarray, cosine: np.ndarray, keyword_weight: float) -> list[int]:
    """Both scores min-max normalised over the pages either list ranks in its top POOL."""
    pool = sorted(set(best(bm25, POOL)) | set(best(cosine, POOL)))
    fused = np.full(len(bm25), -np.inf, dtype=np.float32)
    parts = []
    for scores in (bm25, cosine):
        chosen = scores[pool]
        low, high = float(chosen.min()), float(chosen.max())
        parts.append((chosen - low) / (high - low) if high > low else np.zeros_like(chosen))
    fused[pool] = keyword_weight * parts[0] + (1 - keyword_weight) * parts[1]
    return best(fused)


def cascade(bm25: np.ndarray, cosine: np.ndarray, candidates: int) -> list[int]:
    """BM25's best `candidates` pages, put in the order of their cosine."""
    pool = [row for row in best(bm25, candidates) if bm25[row] > 0]
    if not pool:
        return best(cosine)
    return sorted(pool, key=lambda row: -cosine[row])[:TOP]


def vector_feedback(
    bm25: np.ndarray,
    cosine: np.ndarray,
    page_vectors: np.ndarray,
    vector: np.ndarray,
    *,
    pages: int = 3,
    weight: float = 0.6,
    keyword_weight: float = 0.2,
) -> list[int]:
    """Pseudo-relevance feedback on the question's vector (Rocchio): score fusion once (the
    question's `cosine` with each page), the question's vector moved towards the mean of its
    first `pages` pages' vectors, fused again."""
    first = score_fusion(bm25, cosine, keyword_weight)[:pages]
    if not first:
        return first
    moved = vector + weight * np.mean(np.asarray(page_vectors[first]), axis=0)
    moved = moved / np.linalg.norm(moved)
    return score_fusion(bm25, np.asarray(page_vectors @ moved, dtype=np.float32), keyword_weight)


Key = TypeVar("Key", bound=Hashable)


def _largest(weights: Mapping[Key, float], count: int) -> list[tuple[Key, float]]:
    """The `count` largest weights, largest first, as Counter.most_common orders them (a
    Counter's stubs allow only int counts)."""
    return heapq.nlargest(count, weights.items(), key=itemgetter(1))
