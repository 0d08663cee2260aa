"""What a retrieval's pages are worth, beyond their words: the evidence a `retrieve` tool hands
the gatekeeper (C27) when its corpus has page vectors.

Two measures, both of the question's keyword and vector rankings, whatever the tool's own mode:

- `first_page_cosine`: the cosine between the question and the keyword ranking's first page
  (a question in other words than the page's still lands near the page that answers it);
- `agreement`: how many of the keyword ranking's top k pages are also among the vectors' top k
  (two rankings that meet on a page rarely meet by chance).

On the project's question sets (bench/gatekeeper.py) these tell a first search that found the
answer from one that did not better than word coverage does; docs/offline.md says how the
offline gatekeeper weighs them. A corpus without page vectors gives no evidence, and a pipeline
without a deep fallback asks for none (it has no gatekeeper to read it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from runner.embedding import ModelUnavailable
from runner.retrieval.pages import CorpusError

if TYPE_CHECKING:
    from runner.retrieval.index import CorpusIndex, ScoredPage


def retrieval_evidence(
    index: CorpusIndex, query: str, top_k: int, keyword: Sequence[ScoredPage] | None = None
) -> dict[str, Any] | None:
    """The evidence of a search for `query` (`keyword`: its keyword hits when the tool already
    has them), or None when the corpus has no page vectors or the model cannot run. The
    question is embedded once (the index keeps its last query's vector)."""
    if index.vectors is None or top_k < 1:
        return None
    if keyword is None:
        keyword = index.search(query, top_k, mode="keyword")
    if not keyword:
        return None  # no page shares a word with the question: nothing to weigh
    try:
        # the vectors' own ranking, as measured: reranking would cost a model pass and blur it
        by_cosine = index.search(query, top_k, mode="vector", rerank=False)
        cosine = index.cosine(query, keyword[0].page.node_id)
    except (CorpusError, ModelUnavailable, ImportError):
        return None  # vectors built, model gone: the gatekeeper reads words only, as before
    if not by_cosine or cosine is None:
        return None
    vector_top = {hit.page.node_id for hit in by_cosine}
    return {
        "first_page_cosine": round(cosine, 4),
        "agreement": sum(hit.page.node_id in vector_top for hit in keyword[:top_k]),
        "top_k": top_k,
    }
