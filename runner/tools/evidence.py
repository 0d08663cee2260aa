"""What a retrieval's pages are worth, beyond their words: the evidence a `retrieve` tool hands
the gatekeeper (C27) when its corpus has page vectors.

Two measures, both of the question's keyword and vector rankings, whatever the tool's own mode:

- `first_page_cosine`: the cosine between the question and the keyword ranking's first page
  (a question in other words than the page's still lands near the page that answers it);
- `agreement`: how many of the keyword ranking's top k pages are also among the vectors' top k
  (two rankings that meet on a page rarely meet by chance).

On the project's question sets (bench/gatekeeper.py) these tell a first search that found the
answer from one that did not better than word coverage does; docs/offline.md says how the
offline gatekeeper weighs them. A corpus without page vectors gives no evidence.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from runner.embedding import ModelUnavailable
from runner.llm.passages import EVIDENCE
from runner.retrieval.pages import CorpusError
from runner.text.words import normalize

__all__ = ["EVIDENCE", "retrieval_evidence"]

if TYPE_CHECKING:
    from runner.retrieval.index import CorpusIndex, ScoredPage

# How deep the vector ranking is read for the first page's cosine before it is looked up by row
COSINE_DEPTH = 50


def retrieval_evidence(
    index: CorpusIndex, query: str, top_k: int, keyword: Sequence[ScoredPage] | None = None
) -> dict[str, Any] | None:
    """The evidence of a search for `query` (`keyword`: its keyword hits when the tool already
    has them), or None when the corpus has no page vectors or the model cannot run."""
    if index.vectors is None or top_k < 1:
        return None
    if keyword is None:
        keyword = index.search(query, top_k, mode="keyword")
    if not keyword:
        return None  # no page shares a word with the question: nothing to weigh
    try:
        by_cosine = index.search(query, max(COSINE_DEPTH, top_k), mode="vector")
        if not by_cosine:
            return None
        cosines = {hit.page.node_id: hit.score for hit in by_cosine}
        first = keyword[0]
        cosine = cosines.get(first.page.node_id)
        if cosine is None:
            cosine = _cosine_by_row(index, query, first)
    except (CorpusError, ModelUnavailable, ImportError):
        return None  # vectors built, model gone: the gatekeeper reads words only, as before
    vector_top = {hit.page.node_id for hit in by_cosine[:top_k]}
    return {
        "first_page_cosine": round(cosine, 4),
        "agreement": sum(hit.page.node_id in vector_top for hit in keyword[:top_k]),
        "top_k": top_k,
    }


def _cosine_by_row(index: CorpusIndex, query: str, hit: ScoredPage) -> float:
    """The cosine of a page far down the vector ranking. The index names pages by row only in
    its keyword ranking, so the page's row is the keyword ranking's first with the page's own
    score (the search above ran the same ranking); 0.0 when none has it."""
    assert index.vectors is not None
    searched = index.expanded(normalize(query))
    cosines = index.vectors.scores(index.query_vector(searched))
    for row, score in index.keyword.top(searched, COSINE_DEPTH):
        if score == hit.score:
            return float(cosines[row])
    return 0.0
