"""The llama-index side of a corpus index: the optional vector and hybrid retrievers.

This is the only module of runner that imports llama-index at its top, and only
`runner.retrieval.corpus` imports it, inside the functions that need it: `runner --help`,
`runner validate` and a keyword search never pay for llama-index. (Keyword search and the page
store are runner's own: `keyword.py` on bm25s, `store.py` on SQLite, so that an index opens at
once; llama-index's docstore and BM25Retriever read every page when they load.)

The pitfalls handled here (design.md): a fusion sees only positive keyword hits (bm25s pads with
zero scores; `KeywordRetriever` drops them); `QueryFusionRetriever` is given an explicit `llm=`
(it would otherwise resolve the global default LLM, i.e. try OpenAI); page metadata is excluded
from the embedded text by the nodes themselves (pages.to_nodes).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from runner.retrieval.pages import Page, to_nodes

if TYPE_CHECKING:
    from runner.retrieval.keyword import KeywordIndex

VECTOR_FOLDER = "vector"
# The embedding model used by `mode: vector | hybrid` (needs the `vector` extra): a corpus's
# `embedding.model`, which this environment variable overrides when set, else the default. A
# sentence-transformers model name or a local folder. Read when a vector search first runs.
EMBED_MODEL_ENV = "RUNNER_EMBED_MODEL"
DEFAULT_EMBED_MODEL = "BAAI/bge-small-en-v1.5"


# --- vector and hybrid (optional: the `vector` extra) -----------------------------------------


def embed_model_name(configured: str | None = None) -> str:
    """The model in force: $RUNNER_EMBED_MODEL, else the corpus's `embedding.model`, else
    DEFAULT_EMBED_MODEL."""
    return os.environ.get(EMBED_MODEL_ENV) or configured or DEFAULT_EMBED_MODEL


def load_embed_model(name: str) -> Any:
    """A local sentence-transformers model through llama-index's HuggingFace embeddings."""
    try:
        from llama_index.embeddings.huggingface import HuggingFaceEmbedding
    except ImportError as error:
        raise RuntimeError(
            "mode: vector and mode: hybrid need an embedding model: install runner's `vector` "
            "extra (pip install 'runner[vector]') and name a sentence-transformers model or "
            "folder in the corpus's `embedding: {model: ...}`, or use mode: keyword"
        ) from error
    return HuggingFaceEmbedding(model_name=name)


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_") or "model"


def vector_retriever(pages: Sequence[Page], folder: Path, embed_model: Any, model_name: str) -> Any:
    """A VectorStoreIndex retriever, built once per embedding model and persisted beside BM25."""
    from llama_index.core import StorageContext, VectorStoreIndex, load_index_from_storage

    store = folder / VECTOR_FOLDER / _slug(model_name)
    if store.is_dir():
        context = StorageContext.from_defaults(persist_dir=str(store))
        index = load_index_from_storage(context, embed_model=embed_model)
    else:
        nodes = to_nodes(pages)
        index = VectorStoreIndex(nodes, embed_model=embed_model, show_progress=False)
        index.storage_context.persist(persist_dir=str(store))
    return index.as_retriever()


class PagedCorpus(Protocol):
    """What a fused search needs of a corpus (runner.retrieval.corpus.CorpusIndex is one): its
    keyword index and its pages, by row and by node id."""

    keyword: KeywordIndex

    def page(self, node_id: str) -> Page | None: ...

    def pages_at(self, rows: list[int]) -> list[Page]: ...


class KeywordRetriever(BaseRetriever):
    """The corpus's keyword search as a llama-index retriever (for QueryFusionRetriever)."""

    def __init__(self, corpus: PagedCorpus, top_k: int) -> None:
        super().__init__()
        self._corpus = corpus
        self._top_k = top_k

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        hits = self._corpus.keyword.top(query_bundle.query_str, self._top_k)
        pages = self._corpus.pages_at([row for row, _ in hits])
        return [
            NodeWithScore(node=TextNode(id_=page.node_id, text=page.text), score=score)
            for page, (_, score) in zip(pages, hits, strict=True)
        ]


def fused_search(
    corpus: PagedCorpus, vector: Any, query: str, top_k: int, *, hybrid: bool
) -> list[tuple[Page, float]]:
    """Vector search alone, or keyword and vector fused by reciprocal rank
    (QueryFusionRetriever); (page, score) best first, never a zero score."""
    vector.similarity_top_k = top_k
    if not hybrid:
        hits = [hit for hit in vector.retrieve(query) if (hit.score or 0.0) > 0.0]
    else:
        from llama_index.core.llms import MockLLM
        from llama_index.core.retrievers import QueryFusionRetriever

        fusion = QueryFusionRetriever(
            [KeywordRetriever(corpus, top_k), vector],
            llm=MockLLM(),  # explicit: num_queries=1 generates no queries, but the default LLM
            # would still be resolved (and that is OpenAI)
            mode="reciprocal_rerank",
            similarity_top_k=top_k,
            num_queries=1,
            use_async=False,
        )
        hits = fusion.retrieve(query)
    found = []
    for hit in hits:
        page = corpus.page(hit.node.node_id)
        if page is not None:
            found.append((page, float(hit.score or 0.0)))
    return found
