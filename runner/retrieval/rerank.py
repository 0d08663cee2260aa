"""Reordering a vector or hybrid search's first sections by matching words in context.

A page vector is one point for a whole page: a question in users' words can sit as close to a
page that shares its topic as to the page that answers it. Reranking looks again at the first
`rerank` candidates (`embedding.rerank`, one page a section, as `sections_first` orders them)
word by word. The corpus's model gives every word piece of the question and of each candidate a
vector in its context; each question piece finds its closest piece on the page (its cosine),
and the page's match is the mean of those closest cosines, each question word weighing its BM25
inverse document frequency (a stop word, or a word no page holds, weighs nothing; a question of
such words alone weighs its pieces alike). This is late interaction, as ColBERT scores, with the
model runner already carries: no second model, nothing downloaded.

The match joins the search's score rather than replacing it: over the candidates, the match is
standardised (its mean subtracted, divided by its spread) and added at the spread of the
search's scores, so each counts alike and a page the search put far ahead stays ahead unless
the words agree. Where the index keeps each page's place vector (places.py), the cosine of the
question with the candidate's title and heading joins too, standardised alike at
`PLACE_WEIGHT` of the match's weight: a section named for the question's task moves up among
pages that only share its words. Measured on the project's question sets (docs/retrieval.md):
the words alone found more gold sections first than the search on the three sets in users'
words it was chosen on; with the place joined, more first on all four users'-words sets and more
in the top 5 on pydocs, the held-out Perl set and Git (one fewer on PostgreSQL), none lost on
the heading-worded sets. Alone, the match was worse than the search.

The candidates' word pieces come from the index (page_tokens.py: `runner index` keeps them
from the forward pass that made the page vectors), so a query runs the model over the question
alone; an index without them (built by an older runner) has the model run over the candidates,
tens of milliseconds a page on a CPU.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

import numpy as np

from runner.retrieval.blas import one_blas_thread
from runner.retrieval.page_tokens import QuantizedPieces

if TYPE_CHECKING:
    from runner.retrieval.keyword import KeywordIndex


TIE_SPREAD = 1e-6
# the place's cosine beside the word match (places.py): over the first 20 candidates of the
# project's question sets (docs/retrieval.md), 0.15 to 0.35 put more gold sections first on the
# users'-words sets; pydocs, Perl and Git found more in the top 5 the heavier it was, PostgreSQL
# one fewer at 0.25 and two at 0.35; at 0.5 and above PostgreSQL's top 5 lost more
PLACE_WEIGHT = 0.25


class WordPieces(Protocol):
    """A text's word pieces in context (runner.embedding.models.TokenVectors)."""

    @property
    def vectors(self) -> np.ndarray: ...  # (pieces, dimensions), unit-length rows

    @property
    def words(self) -> list[str]: ...  # the word each piece is of


class TokenEmbedder(Protocol):
    """What reranking needs of a model (runner.embedding.models.Embedder)."""

    def token_vectors(self, texts: Sequence[str]) -> Sequence[WordPieces]: ...


def reranked(
    query: str,
    texts: Sequence[str] | None,
    scores: Sequence[float],
    embedder: TokenEmbedder,
    keyword: KeywordIndex,
    pieces: Sequence[np.ndarray] | QuantizedPieces | None = None,
    question: WordPieces | None = None,
    places: Sequence[float] | np.ndarray | None = None,
) -> list[tuple[int, float]]:
    """(candidate, joined score) for each of the candidates (their `embedded_text` and search
    scores), best first: the search score joined with the words' match (the module's
    docstring). Candidates the words do not tell apart keep their order and scores.

    `pieces`, when given, are the candidates' word-piece vectors as the index keeps them
    (page_tokens.py), and `question` the query's own (from the pass that embedded it): the
    model then runs over neither, and `texts` may be None. `places`, when given, are the
    cosines of the candidates' place vectors with the question (places.py)."""
    searched = np.asarray(scores, dtype=np.float64)
    unchanged = [(row, float(score)) for row, score in enumerate(searched)]
    if len(searched) < 2:
        return unchanged
    if pieces is None or question is None:
        if pieces is None and texts is None:
            raise ValueError("reranking needs the candidates' texts or their word pieces")
        asked, *pages = embedder.token_vectors([query, *(texts or [] if pieces is None else [])])
        question = question or asked
        pieces = [page.vectors for page in pages] if pieces is None else pieces
    weights = keyword.word_weights(question.words)
    if float(weights.sum()) <= 0.0:
        weights = np.ones(len(question.words), dtype=np.float32)
    matches = word_matches(question.vectors, weights, pieces)
    evidence = standardised(matches)
    if places is not None:
        evidence = evidence + PLACE_WEIGHT * standardised(np.asarray(places, dtype=np.float64))
    if not evidence.any():
        return unchanged
    spread = float(searched.std()) or TIE_SPREAD  # scores all alike: the words break the tie
    joined = searched + evidence * spread
    return [(int(row), float(joined[row])) for row in np.argsort(-joined, kind="stable")]


def standardised(values: np.ndarray) -> np.ndarray:
    """The values less their mean, over their spread; all zeros when they are all alike."""
    values = np.asarray(values, dtype=np.float64)
    spread = float(values.std())
    return (values - values.mean()) / spread if spread > 0.0 else np.zeros_like(values)


def word_match(question: np.ndarray, weights: np.ndarray, page: np.ndarray) -> float:
    """The weighted mean over the question's pieces (rows of `question`) of each one's best
    cosine with a piece of the page."""
    if not len(question) or not len(page) or float(weights.sum()) <= 0.0:
        return 0.0
    closest = (question @ page.T).max(axis=1)
    return float(closest @ weights / weights.sum())


def word_matches(
    question: np.ndarray, weights: np.ndarray, pages: Sequence[np.ndarray] | QuantizedPieces
) -> np.ndarray:
    """`word_match` of each page (its pieces' rows, or the index's int8 rows and scales), on
    one BLAS thread (blas.py: 20 small products on BLAS's own threads took milliseconds each
    on a loaded machine). Each page's rows are converted into one float32 buffer that stays in
    the processor's cache and multiplied from there: converting the candidates' rows (a few
    MB) whole and then reading them again took about a third more CPU. Stored int8 rows are
    multiplied as they are and each cosine scaled after (q · (r × s) = (q · r) × s)."""
    blocks = pages.blocks if isinstance(pages, QuantizedPieces) else list(pages)
    matches = np.zeros(len(blocks), dtype=np.float64)
    filled = [page for page, block in enumerate(blocks) if len(block)]
    if not len(question) or not filled or float(weights.sum()) <= 0.0:
        return matches
    weighed = weights > 0  # a piece that weighs nothing (a stop word's) changes no mean
    question, weights = question[weighed], weights[weighed]
    counts = [len(blocks[page]) for page in filled]
    asked = np.ascontiguousarray(question.T, dtype=np.float32)  # (dimensions, question pieces)
    cosines = np.empty((sum(counts), len(question)), dtype=np.float32)
    buffer = np.empty((max(counts), asked.shape[0]), dtype=np.float32)
    start = 0
    with one_blas_thread():
        for page, count in zip(filled, counts, strict=True):
            buffer[:count] = blocks[page]  # int8 to float32 in the same pass as the copy
            np.matmul(buffer[:count], asked, out=cosines[start : start + count])
            start += count
    if isinstance(pages, QuantizedPieces):
        cosines *= np.concatenate([pages.scales[page] for page in filled])[:, None]
    starts = np.cumsum([0, *counts[:-1]])
    closest = np.maximum.reduceat(cosines, starts, axis=0)  # (pages, question pieces)
    matches[filled] = closest @ weights / weights.sum()
    return matches
