"""How a retrieval's pages can be read by meaning: what a `retrieve` tool hands the answerer
when its search was by meaning (`mode: vector` or `hybrid`) or its corpus's model is loaded
anyway for the gatekeeper's evidence.

Data, not a handle: the model that embedded the corpus's pages (its name and the precision of
its weights, so that the reader embeds sentences on the same weights) and the page the search
ranked first (`{document, page}`). The offline provider loads the model by name
(`runner.embedding.models.load_embedder`: once per process, safe from worker threads) and
scores each sentence, list item and table row against the question with it, beside the words
(docs/offline.md, "Reading by meaning"). A page a deep search reads (`read_page`) carries its
own cosine with the question too (`page_meaning`). A corpus without page vectors gives none:
its pages are read by their words alone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from runner.retrieval.words_alone import CANNOT_EMBED

if TYPE_CHECKING:
    from runner.retrieval.index import CorpusIndex, ScoredPage
    from runner.retrieval.pages import Page


def retrieval_meaning(
    index: CorpusIndex, hits: Sequence[ScoredPage], mode: str, model_loaded: bool
) -> dict[str, Any] | None:
    """The meaning of a search's pages, or None when the corpus has no page vectors, nothing
    was found, or reading by meaning would load a model the round does not load anyway (a
    keyword search without a gatekeeper's evidence)."""
    if index.vectors is None or not hits or (mode == "keyword" and not model_loaded):
        return None
    first = hits[0].page
    return {
        "model": index.vectors.model,
        "precision": index.vectors.precision,
        # the page search by meaning ranked first; a keyword search's first is the words'
        "first": {"document": first.document, "page": first.page} if mode != "keyword" else None,
    }


def page_meaning(index: CorpusIndex, question: str) -> Callable[[Page], dict[str, Any] | None]:
    """How a page read for `question` (`read_page`, in a deep search) can be read by meaning:
    the model, its precision and the page's own cosine with the question (its page vector, as
    search scored it). The page that means nothing of the question does not answer it, whatever
    words it shares (docs/offline.md, `read_page`). None for every page of a corpus without
    page vectors, or when the model cannot run here: those pages are read by their words."""

    def meaning(page: Page) -> dict[str, Any] | None:
        if index.vectors is None:
            return None
        try:
            cosine = index.cosine(question, page.node_id)
        except CANNOT_EMBED:
            return None
        if cosine is None:
            return None
        return {
            "model": index.vectors.model,
            "precision": index.vectors.precision,
            "first": None,  # a page read alone: no search ranked it among others
            "cosine": round(cosine, 4),
        }

    return meaning
