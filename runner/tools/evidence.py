"""What a retrieval's pages are worth, beyond their words: the evidence a `retrieve` tool hands
the gatekeeper (C27) when its corpus has page vectors.

Two measures of the pages the tool actually returned, in the order its own search ranked them
(keyword, vector or hybrid):

- `first_page_cosine`: the cosine between the question and the first of those pages (a question
  in other words than the page's still lands near the page that answers it);
- `agreement`: how many of those pages both the keyword ranking and the vectors' ranking put in
  their top k (two rankings that meet on a page rarely meet by chance).

For a keyword search these are the keyword ranking's first page and the keyword pages among the
vectors' best, as before. For a hybrid search they are of the hybrid ranking: the page hybrid
search put first, not BM25's first, is what the context and the answer lead with, so it is the
page the gatekeeper must weigh (BM25's first page can be a page the context does not even hold).

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
    index: CorpusIndex, query: str, top_k: int, hits: Sequence[ScoredPage], mode: str
) -> dict[str, Any] | None:
    """The evidence of the pages a search in `mode` returned for `query` (`hits`, best first),
    or None when it returned none, the corpus has no page vectors or the model cannot run. The
    question is embedded once (the index keeps its last query's vector)."""
    if index.vectors is None or top_k < 1 or not hits:
        return None  # nothing found, or nothing to weigh it with
    returned = [hit.page.node_id for hit in hits[:top_k]]
    try:
        keyword = returned if mode == "keyword" else _top(index, query, top_k, "keyword")
        # the vectors' own ranking, as measured: reranking would cost a model pass and blur it
        by_cosine = _top(index, query, top_k, "vector")
        cosine = index.cosine(query, returned[0])
    except (CorpusError, ModelUnavailable, ImportError):
        return None  # vectors built, model gone: the gatekeeper reads words only, as before
    if not by_cosine or cosine is None:
        return None
    both = set(keyword) & set(by_cosine)
    return {
        "first_page_cosine": round(cosine, 4),
        "agreement": sum(node_id in both for node_id in returned),
        "top_k": top_k,
        "ranking": mode,
    }


def _top(index: CorpusIndex, query: str, top_k: int, mode: str) -> list[str]:
    return [hit.page.node_id for hit in index.search(query, top_k, mode=mode, rerank=False)]
