"""The llama-index side of a corpus index: the BM25 retriever, the docstore, and the optional
vector and hybrid retrievers.

This is the only module of runner that imports llama-index at its top, and only
`runner.retrieval.index` imports it, inside the functions that need it: `runner --help` and
`runner validate` never pay for llama-index.

The pitfalls handled here (design.md): bm25s pads a result list with zero-score hits (dropped in
`PositiveBM25Retriever`, also before a fusion sees them); retriever settings such as top_k are not
what we persist (set per call); `QueryFusionRetriever` is given an explicit `llm=` (it would
otherwise resolve the global default LLM, i.e. try OpenAI); page metadata is excluded from the
indexed text by the nodes themselves (pages.to_nodes).
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import bm25s
import numpy as np
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode
from llama_index.core.storage.docstore import SimpleDocumentStore
from llama_index.retrievers.bm25 import BM25Retriever

BM25_FOLDER = "bm25"
DOCSTORE_FILE = "docstore.json"
VECTOR_FOLDER = "vector"
# The embedding model used by `mode: vector | hybrid` (needs the `vector` extra): a corpus's
# `embedding.model`, which this environment variable overrides when set, else the default. A
# sentence-transformers model name or a local folder. Read when a vector search first runs.
EMBED_MODEL_ENV = "RUNNER_EMBED_MODEL"
DEFAULT_EMBED_MODEL = "BAAI/bge-small-en-v1.5"


class PositiveBM25Retriever(BM25Retriever):
    """BM25Retriever that never returns zero-score hits and takes top_k per call."""

    _lock = threading.Lock()

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        if not self.query_tokens(query_bundle.query_str):
            return []  # bm25s would score every page 0 and return the first k
        return [hit for hit in super()._retrieve(query_bundle) if (hit.score or 0.0) > 0.0]

    @property
    def page_count(self) -> int:
        return int(self.bm25.scores["num_docs"])

    def search(self, query: str, top_k: int) -> list[NodeWithScore]:
        # similarity_top_k lives on the shared retriever: set it and retrieve under a lock
        with self._lock:
            self.similarity_top_k = max(1, min(top_k, self.page_count))
            return self.retrieve(query)

    def query_tokens(self, query: str) -> list[str]:
        """The query's tokens as the index knows them (stop words out, stemmed, in the vocab)."""
        tokenized = bm25s.tokenize(
            query,
            stemmer=None if self.skip_stemming else self.stemmer,
            token_pattern=self.token_pattern,
            return_ids=False,
            show_progress=False,
        )
        vocabulary = self.bm25.vocab_dict
        return [token for token in tokenized[0] if token in vocabulary]

    def match_count(self, query: str) -> int:
        """How many pages score above zero: every page that shares a term with the query."""
        tokens = self.query_tokens(query)
        if not tokens:
            return 0
        return int(np.count_nonzero(self.bm25.get_scores(tokens) > 0.0))


def build(nodes: Sequence[TextNode], folder: Path) -> PositiveBM25Retriever:
    """Index the nodes and persist the BM25 index and the docstore into `folder`."""
    # top_k is set per query (it is not persisted anyway); 1 here keeps llama-index from warning
    # that its default is larger than a corpus of a single page
    retriever = PositiveBM25Retriever(nodes=list(nodes), language="en", similarity_top_k=1)
    folder.mkdir(parents=True, exist_ok=True)
    retriever.persist(str(folder / BM25_FOLDER), show_progress=False)
    docstore = SimpleDocumentStore()
    docstore.add_documents(list(nodes))
    docstore.persist(str(folder / DOCSTORE_FILE))
    return retriever


def load(folder: Path) -> tuple[PositiveBM25Retriever, list[TextNode]]:
    """The persisted retriever and the docstore's nodes, in corpus order."""
    retriever = PositiveBM25Retriever.from_persist_dir(
        str(folder / BM25_FOLDER), show_progress=False
    )
    docstore = SimpleDocumentStore.from_persist_path(str(folder / DOCSTORE_FILE))
    nodes = [node for node in docstore.docs.values() if isinstance(node, TextNode)]
    return retriever, nodes


def is_complete(folder: Path) -> bool:
    return (folder / BM25_FOLDER).is_dir() and (folder / DOCSTORE_FILE).is_file()


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


def vector_retriever(
    nodes: Sequence[TextNode], folder: Path, embed_model: Any, model_name: str
) -> Any:
    """A VectorStoreIndex retriever, built once per embedding model and persisted beside BM25."""
    from llama_index.core import StorageContext, VectorStoreIndex, load_index_from_storage

    store = folder / VECTOR_FOLDER / _slug(model_name)
    if store.is_dir():
        context = StorageContext.from_defaults(persist_dir=str(store))
        index = load_index_from_storage(context, embed_model=embed_model)
    else:
        index = VectorStoreIndex(list(nodes), embed_model=embed_model, show_progress=False)
        index.storage_context.persist(persist_dir=str(store))
    return index.as_retriever()


def fused_search(
    bm25: PositiveBM25Retriever, vector: Any, query: str, top_k: int, *, hybrid: bool
) -> list[NodeWithScore]:
    """Vector search alone, or BM25 and vector fused by reciprocal rank (QueryFusionRetriever)."""
    vector.similarity_top_k = top_k
    if not hybrid:
        return [hit for hit in vector.retrieve(query) if (hit.score or 0.0) > 0.0]
    from llama_index.core.llms import MockLLM
    from llama_index.core.retrievers import QueryFusionRetriever

    with bm25._lock:
        bm25.similarity_top_k = max(1, min(top_k, bm25.page_count))
        fusion = QueryFusionRetriever(
            [bm25, vector],
            llm=MockLLM(),  # explicit: num_queries=1 generates no queries, but the default LLM
            # would still be resolved (and that is OpenAI)
            mode="reciprocal_rerank",
            similarity_top_k=top_k,
            num_queries=1,
            use_async=False,
        )
        return fusion.retrieve(query)
