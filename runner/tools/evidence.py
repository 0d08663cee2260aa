"""What a retrieval's pages are worth, beyond their words: the evidence a `retrieve` tool hands
the gatekeeper (C27) when its corpus has page vectors.

Two measures:

- `first_page_cosine`: the cosine between the question and the first page the tool returned, in
  its own search's order (keyword, vector or hybrid: `ranking`) — a question in other words than
  the page's still lands near the page that answers it. Under hybrid search that is the page
  hybrid search put first, which the context and the answer lead with, not BM25's first, which
  the context may not even hold;
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

from runner.retrieval.words_alone import CANNOT_EMBED

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
    except CANNOT_EMBED:
        return None  # vectors built, model gone: the gatekeeper reads words only, as before
    if not by_cosine or cosine is None:
        return None
    return {
        "first_page_cosine": round(cosine, 4),
        "agreement": len(set(keyword) & set(by_cosine)),
        "top_k": top_k,
        "ranking": mode,
    }


def _top(index: CorpusIndex, query: str, top_k: int, mode: str) -> list[str]:
    return [hit.page.node_id for hit in index.search(query, top_k, mode=mode, rerank=False)]
