"""A loaded corpus index: pages in a lazily read page store, keyword search on memory-mapped
BM25 matrices, and (when the corpus has an embedding model) vector and hybrid search on
memory-mapped page vectors (vectors.py, fusion.py)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from runner.retrieval.expansion import Synonyms
from runner.retrieval.pages import CorpusError, Page, goes_on_with_table, page_id
from runner.retrieval.store import PageStore
from runner.text.words import normalize

if TYPE_CHECKING:
    from runner.retrieval.keyword import KeywordIndex
    from runner.retrieval.vectors import VectorIndex

SEARCH_MODES = ("keyword", "vector", "hybrid")


@dataclass(frozen=True)
class ScoredPage:
    """A page a search returned, with the search's score."""

    page: Page
    score: float


@dataclass(frozen=True)
class IndexStatus:
    """How a corpus's index was opened: built or loaded, why, and what it holds."""

    corpus: str
    rebuilt: bool  # built by this call (missing, stale or forced)
    reason: str  # why it was rebuilt, or "up to date"
    pages: int
    seconds: float
    embedded: int = 0  # pages whose vectors this call embedded (the others' were reused)


class CorpusIndex:
    """A corpus: its pages in corpus order and the searches over them."""

    def __init__(
        self,
        name: str,
        folder: Path,
        keyword: KeywordIndex,
        store: PageStore,
        status: IndexStatus,
        vectors: VectorIndex | None = None,
        *,
        keep_navigation: bool = False,
        synonyms: Mapping[str, tuple[str, ...]] | None = None,
        rerank: int = 0,
        reranker: Mapping[str, Any] | None = None,
    ) -> None:
        self.name = name
        # a vector or hybrid search's first candidates reordered word by word (rerank.py), or
        # by the rerank endpoint `reranker` names (runner/embedding/rerank_service.py)
        self.rerank = rerank
        self.reranker = reranker
        self.keep_navigation = keep_navigation  # the corpus's `pages.navigation: keep`
        self.vectors = vectors  # the page vectors of the corpus's embedding model, if any
        self.folder = folder  # the index folder
        self.status = status
        self.keyword = keyword
        self.synonyms = Synonyms(synonyms or {})  # the corpus's `synonyms:`
        self._store = store
        self._last_query: tuple[str, Any] | None = None  # (text, vector): query_vector's
        # why a corpus searched by meaning is searched by words alone (the model cannot run
        # here: words_alone.py), or None
        self.words_alone: str | None = None

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

    def search(
        self,
        query: str,
        top_k: int,
        *,
        mode: str = "keyword",
        rerank: bool = True,
        sections: bool = True,
    ) -> list[ScoredPage]:
        """The best pages for a query, best first; never a page that scored zero, nor (unless
        the corpus keeps them) a navigation page.

        `mode` vector and hybrid search the corpus's page vectors (its `embedding.model`, or
        runner's default when a tool searches it so; built by `runner index`), their first
        candidates reranked word by word (`embedding.rerank`) unless `rerank` is False.
        `sections` False takes the pages in score order, a section's further pages included
        (`sections_first` is for whole pages: a retrieval cutting pages to excerpts pays only
        for what of each page bears)."""
        if mode not in SEARCH_MODES:
            raise ValueError(f"unknown search mode {mode!r}; use one of {', '.join(SEARCH_MODES)}")
        query = self.expanded(normalize(query))
        if top_k < 1 or not query.strip():
            return []
        left_out = 0 if self.keep_navigation else self._store.navigation_count()
        if self.words_alone is not None:
            mode = "keyword"  # said once, when the corpus was opened
        reranked_count = self.rerank if rerank and mode != "keyword" else 0
        # room for the navigation pages left out below, and for other sections than the best's
        wanted = max(top_k, reranked_count) * SECTION_POOL + left_out
        if mode == "keyword":
            hits = self.keyword.top(query, wanted)
        else:
            hits = self._embedded_search(query, wanted, hybrid=mode == "hybrid")
        pages = self._store.by_ords([row for row, _ in hits])
        found = [ScoredPage(page, score) for page, (_, score) in zip(pages, hits, strict=True)]
        if left_out:
            found = [hit for hit in found if not hit.page.navigation]
        if sections:
            found = sections_first(found)
        if reranked_count:
            rows = {page.node_id: row for page, (row, _) in zip(pages, hits, strict=True)}
            found = self._reranked(query, found, reranked_count, rows)
        return found[:top_k]

    def warm_up(self) -> None:
        """One search by meaning and words, reranked, when the corpus has page vectors its
        model can run here: the model loaded and run once now (a service's start), not in a
        user's first round (0.1-0.2 s more than the next). Raises what a search raises."""
        if self.vectors is not None and self.words_alone is None:
            self.search("getting started", 1, mode="hybrid")

    def with_table_pieces(self, found: list[ScoredPage]) -> list[ScoredPage]:
        """The pages a tool chose (a search's, its parts' too), each that holds a piece of a table
        cut across pages (pages.py) followed by the table's pieces on the pages next to it, at
        the page's score and beyond top_k: a row asked for ("Noise, spin" of a specifications
        table) is as often on the piece the search did not rank. Added once the pages are
        chosen, so that no cut to top_k drops a piece or a page for it."""
        taken = {hit.page.node_id for hit in found}
        whole: list[ScoredPage] = []
        for hit in found:
            whole.append(hit)
            if "\n|" not in hit.page.text and not hit.page.text.startswith("|"):
                continue  # no table: nothing to look up
            for piece in self._table_pieces(hit.page):
                if piece.node_id not in taken:
                    taken.add(piece.node_id)
                    whole.append(ScoredPage(piece, hit.score))
        return whole

    def _table_pieces(self, page: Page) -> list[Page]:
        """The pages before and after `page` that go on with a table it holds a piece of."""
        pieces: list[Page] = []
        for number in (page.page - 1, page.page + 1):
            found = self._store.by_id(page_id(page.document, number))
            if found is None or found[1].navigation:
                continue
            other = found[1]
            earlier, later = (other, page) if number < page.page else (page, other)
            if goes_on_with_table(earlier, later):
                pieces.append(other)
        return pieces

    def expanded(self, query: str) -> str:
        """The query with the documents' words its users' words stand for (`synonyms:`)."""
        return self.synonyms.expand(query) if self.synonyms else query

    def match_count(self, query: str) -> int:
        """How many pages a keyword search finds at all (score above zero), before top_k."""
        return self.keyword.match_count(self.expanded(normalize(query)))

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

    def query_vector(self, query: str) -> Any:
        """The query embedded by the corpus's model (loaded on first use). The last query's
        vector is kept: a tool that searches and then weighs the same question embeds it once."""
        if self.vectors is None:
            raise CorpusError(
                f"corpus {self.name!r} has no page vectors: give it an `embedding: {{model: "
                "all-MiniLM-L6-v2}` (or search it with a tool in `mode: vector` or `hybrid`) "
                "and run `runner index`"
            )
        return self._question(query)[0]

    def _question(self, query: str) -> tuple[Any, Any]:
        """The query's vector and word pieces (one forward pass), the last query's kept."""
        from runner.embedding.models import load_embedder, runtime_for

        assert self.vectors is not None
        last = self._last_query
        if last is not None and last[0] == query:
            return last[1]
        # the query on weights of the pages' precision, whatever the default runtime now is
        embedder = load_embedder(self.vectors.model, runtime_for(self.vectors.precision))
        found = embedder.question(query)
        self._last_query = (query, found)
        return found

    def cosine(self, query: str, node_id: str) -> float | None:
        """The cosine of the query (as a search reads it) with one page; None when the corpus
        has no such page."""
        found = self._store.by_id(node_id)
        if found is None:
            return None
        vector = self.query_vector(self.expanded(normalize(query)))
        assert self.vectors is not None  # query_vector raised otherwise
        return self.vectors.cosine(found[0], vector)

    def _reranked(
        self, query: str, found: list[ScoredPage], count: int, rows: Mapping[str, int]
    ) -> list[ScoredPage]:
        """The first `count` hits reordered by how the question's words match theirs
        (rerank.py), the others after them as they were. The pages' word pieces are read
        from the index where it keeps them (`rows`: each page's row in it)."""
        from runner.embedding.models import load_embedder, runtime_for
        from runner.retrieval.rerank import reranked
        from runner.retrieval.vectors import embedded_text

        assert self.vectors is not None  # an embedded search found them
        head = found[:count]
        if self.reranker is not None:
            from runner.embedding.rerank_service import RerankSpec
            from runner.embedding.rerank_service import reranked as by_endpoint

            texts = [embedded_text(hit.page) for hit in head]
            scored = by_endpoint(RerankSpec.of(self.reranker), query, texts)
            return [ScoredPage(head[row].page, score) for row, score in scored] + found[count:]
        embedder = load_embedder(self.vectors.model, runtime_for(self.vectors.precision))
        tokens = self.vectors.tokens
        # the pages' text is needed only to run the model over them (no pieces kept)
        read = [embedded_text(hit.page) for hit in head] if tokens is None else None
        vector, question = self._question(query)
        candidates = [rows[hit.page.node_id] for hit in head]
        order = reranked(
            query,
            read,
            [hit.score for hit in head],
            embedder,
            self.keyword,
            None if tokens is None else tokens.of_pages(candidates),
            question,
            self.vectors.place_cosines(candidates, vector),
        )
        return [ScoredPage(head[row].page, score) for row, score in order] + found[count:]

    def _embedded_search(self, query: str, wanted: int, *, hybrid: bool) -> list[tuple[int, float]]:
        from runner.retrieval.fusion import hybrid_top

        vector = self.query_vector(query)
        assert self.vectors is not None
        if not hybrid:
            return [(row, score) for row, score in self.vectors.top(vector, wanted) if score > 0.0]
        return hybrid_top(self.keyword, self.vectors, query, vector, wanted)


SECTION_POOL = 4  # a search weighs this many times top_k pages to find top_k sections


def sections_first(found: list[ScoredPage]) -> list[ScoredPage]:
    """The best page of each section (its document, enclosing headings and heading) first, in
    score order, then the sections' other pages in score order: top_k pages span as many
    sections as the search found, and a section's further pages come only when there are no
    other sections (its neighbours are a `neighbor_search` away)."""
    seen: set[tuple[str, tuple[str, ...], str]] = set()
    first: list[ScoredPage] = []
    further: list[ScoredPage] = []
    for hit in found:
        section = (hit.page.document, hit.page.path, hit.page.heading)
        (further if section in seen else first).append(hit)
        seen.add(section)
    return first + further
