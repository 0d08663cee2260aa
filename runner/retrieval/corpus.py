"""A loaded corpus index: pages in a lazily read page store, keyword search on memory-mapped
BM25 matrices, and (built on first use) vector and hybrid search through llama-index."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from runner.retrieval.pages import Page
from runner.retrieval.store import PageStore
from runner.text.words import normalize

if TYPE_CHECKING:
    from runner.retrieval.keyword import KeywordIndex

SEARCH_MODES = ("keyword", "vector", "hybrid")


@dataclass(frozen=True)
class ScoredPage:
    page: Page
    score: float


@dataclass(frozen=True)
class IndexStatus:
    corpus: str
    rebuilt: bool  # built by this call (missing, stale or forced)
    reason: str  # why it was rebuilt, or "up to date"
    pages: int
    seconds: float


class CorpusIndex:
    """A corpus: its pages in corpus order and the searches over them."""

    def __init__(
        self,
        name: str,
        folder: Path,
        keyword: KeywordIndex,
        store: PageStore,
        status: IndexStatus,
        embedding: str | None = None,
        *,
        keep_navigation: bool = False,
    ) -> None:
        self.name = name
        self.keep_navigation = keep_navigation  # the corpus's `pages.navigation: keep`
        self.embedding = embedding  # the corpus's `embedding.model`, if it names one
        self.folder = folder  # the index folder
        self.status = status
        self.keyword = keyword
        self._store = store
        self._vectors: dict[str, Any] = {}

    def __len__(self) -> int:
        return len(self._store)

    def pages(self) -> list[Page]:
        """Every page in corpus order (documents by path, pages by number): the full scan."""
        return self._store.all()

    def answer_pages(self) -> list[Page]:
        """The pages a search may return, in corpus order (a search's full scan reads them):
        every page but the navigation pages, unless the corpus keeps them."""
        pages = self._store.all()
        if self.keep_navigation or not self._store.navigation_count():
            return pages
        return [page for page in pages if not page.navigation]

    def page(self, node_id: str) -> Page | None:
        found = self._store.by_id(node_id)
        return found[1] if found is not None else None

    def pages_at(self, rows: list[int]) -> list[Page]:
        """The pages of these BM25 document numbers (page store rows), in that order."""
        return self._store.by_ords(rows)

    def search(
        self, query: str, top_k: int, *, mode: str = "keyword", embed_model: Any = None
    ) -> list[ScoredPage]:
        """The best pages for a query, best first; never a page that scored zero, nor (unless
        the corpus keeps them) a navigation page.

        `mode` vector and hybrid need an embedding model: `embed_model` (any llama-index
        embedding), else the one `backend.embed_model_name` names: $RUNNER_EMBED_MODEL, the
        corpus's `embedding.model` or the default (the `vector` extra)."""
        if mode not in SEARCH_MODES:
            raise ValueError(f"unknown search mode {mode!r}; use one of {', '.join(SEARCH_MODES)}")
        query = normalize(query)
        if top_k < 1 or not query.strip():
            return []
        left_out = 0 if self.keep_navigation else self._store.navigation_count()
        wanted = top_k + left_out  # room for the navigation pages left out below
        if mode == "keyword":
            hits = self.keyword.top(query, wanted)
            pages = self._store.by_ords([row for row, _ in hits])
            found = [ScoredPage(page, score) for page, (_, score) in zip(pages, hits, strict=True)]
        else:
            from runner.retrieval import backend

            vector = self._vector_retriever(embed_model)
            scored = backend.fused_search(self, vector, query, wanted, hybrid=mode == "hybrid")
            found = [ScoredPage(page, score) for page, score in scored]
        if left_out:
            found = [hit for hit in found if not hit.page.navigation]
        return found[:top_k]

    def match_count(self, query: str) -> int:
        """How many pages a keyword search finds at all (score above zero), before top_k."""
        return self.keyword.match_count(normalize(query))

    def indexed_terms(self, query: str) -> list[str]:
        """The query's terms as BM25 sees them (stop words removed, stemmed, known to the index)."""
        return self.keyword.query_tokens(normalize(query))

    def neighbors(self, node_id: str, window: int = 1) -> list[Page]:
        """The pages up to `window` before and after a page, in page order, the page itself
        left out; always of the same document. Navigation pages count in the window but are
        not returned (unless the corpus keeps them)."""
        found = self._store.by_id(node_id)
        if found is None:
            return []
        row, page = found
        before, after = self._store.around(row, page.document, window)
        around = list(reversed(before)) + after
        return [page for page in around if self.keep_navigation or not page.navigation]

    def _vector_retriever(self, embed_model: Any) -> Any:
        from runner.retrieval import backend

        if embed_model is None:
            model_name = backend.embed_model_name(self.embedding)
        else:
            model_name = _model_name(embed_model)
        if model_name not in self._vectors:
            model = backend.load_embed_model(model_name) if embed_model is None else embed_model
            self._vectors[model_name] = backend.vector_retriever(
                self.pages(), self.folder, model, model_name
            )
        return self._vectors[model_name]


def _model_name(embed_model: Any) -> str:
    """Names the persisted vector index: a model's own name, else its class."""
    name = getattr(embed_model, "model_name", None)
    return str(name) if name and name != "unknown" else type(embed_model).__name__
