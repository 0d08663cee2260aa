"""Embedders that ask a service, named by a corpus's `embedding: {provider, ...}`:

- `openai_like`: an OpenAI-compatible `POST {api_base}/embeddings` (vLLM, llama.cpp's server
  started with `--embedding`, Ollama's `/v1`, Hugging Face TEI, OpenAI);
- `ollama`: Ollama's own `POST {api_base}/api/embed` ({model, input} -> {embeddings});
- `llama_index`: a llama-index embedding class (`class:`, built with `options:`), which
  speaks to its service itself (class_embedder.py).

Each is batched (`batch_size` texts a call), bounded (`timeout_s` a call, each text held to
`max_chars` characters) and retried (endpoint.py), and its vectors are made unit length.

Its vectors are stored under an identity that names the provider, the model and the endpoint
(`openai_like:MODEL@API_BASE`; a llama-index class in the endpoint's place), with a digest of
the settings that change the vectors when any is set (`#…`: `options`, `max_chars`): a change
of any of them re-embeds the pages, and an index never mixes a service's vectors with runner's
own or another service's. An embeddings endpoint gives one vector a text, not a vector a word
piece, so runner's own word-by-word rerank cannot run on them; a rerank endpoint can
(rerank_service.py).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from runner.embedding import endpoint
from runner.embedding.catalog import ModelUnavailable, is_remote
from runner.embedding.endpoint import ATTEMPTS, cut

BATCH = 64  # texts a request (`batch_size`)
TIMEOUT_S = 60.0  # a request's bound (`timeout_s`)
MAX_CHARS = 4000  # a text's characters at most (`max_chars`): about 1,000 word pieces


@dataclass(frozen=True)
class RemoteSpec:
    """Where a service embeds: `provider`, its `api_base`, the `model` it serves, the
    environment variable holding its key (None: no key sent), and its bounds; a llama-index
    class (`embed_class`, built with `options`) for provider llama_index."""

    provider: str
    api_base: str
    model: str
    api_key_env: str | None = None
    timeout_s: float = TIMEOUT_S
    batch_size: int = BATCH
    max_chars: int = MAX_CHARS
    embed_class: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)

    @property
    def identity(self) -> str:
        """The name the index stores the vectors under."""
        where = self.embed_class if self.provider == "llama_index" else self.api_base.rstrip("/")
        return f"{self.provider}:{self.model}@{where}{self._variant()}"

    def _variant(self) -> str:
        """`#digest` of what else changes the vectors, when any of it is set ('' otherwise, so
        that an identity written before these settings existed stays the same)."""
        changes: dict[str, Any] = {}
        if self.options:
            changes["options"] = dict(self.options)
        if self.max_chars != MAX_CHARS:
            changes["max_chars"] = self.max_chars
        if self.provider == "llama_index" and self.api_base:
            changes["api_base"] = self.api_base
        if not changes:
            return ""
        text = json.dumps(changes, sort_keys=True, default=str)
        return "#" + hashlib.blake2b(text.encode(), digest_size=4).hexdigest()

    @property
    def where(self) -> str:
        """The service, as a message names it."""
        if self.provider == "llama_index":
            return f"embedding class {self.embed_class}"
        return f"embedding service {self.api_base}"


def spec_from(embedding: Any) -> RemoteSpec:
    """The service a corpus's `embedding` (runner.config.model.Embedding, with a `provider`)
    names: its keys as validated, each left out taking its default here."""
    settings: Mapping[str, Any] = getattr(embedding, "settings", None) or {}
    return RemoteSpec(
        embedding.provider,
        embedding.api_base or "",
        embedding.model,
        embedding.api_key_env,
        timeout_s=float(settings.get("timeout_s", TIMEOUT_S)),
        batch_size=int(settings.get("batch_size", BATCH)),
        max_chars=int(settings.get("max_chars", MAX_CHARS)),
        embed_class=settings.get("class"),
        options=dict(settings.get("options", {})),
    )


_DECLARED: dict[str, RemoteSpec] = {}


def declare(spec: RemoteSpec) -> str:
    """Remembers the service behind an identity (its key's variable is not part of it) and
    returns the identity, which the index then names the vectors by."""
    _DECLARED[spec.identity] = spec
    return spec.identity


def spec_of(identity: str) -> RemoteSpec:
    """The service an identity names: as declared, else read back from the identity (its
    options, which only a digest names, then unknown)."""
    if identity in _DECLARED:
        return _DECLARED[identity]
    provider, _, rest = identity.partition(":")
    model, _, where = rest.partition("@")
    where = where.partition("#")[0]
    if provider == "llama_index":
        return RemoteSpec(provider, "", model, embed_class=where)
    return RemoteSpec(provider, where, model)


__all__ = [
    "ATTEMPTS",
    "EmbeddingServiceError",
    "RemoteEmbedder",
    "RemoteSpec",
    "declare",
    "is_remote",
    "spec_from",
    "spec_of",
]


class EmbeddingServiceError(ModelUnavailable):
    """The service could not embed: unreachable, refusing, or answering something else."""


class RemoteEmbedder:
    """Texts in, unit-length float32 vectors out, from an HTTP service (openai_like, ollama);
    batched, retried, bounded."""

    def __init__(self, spec: RemoteSpec, timeout_s: float | None = None) -> None:
        self.spec = spec
        self.name = spec.identity
        self.timeout_s = spec.timeout_s if timeout_s is None else timeout_s
        self._dimensions: int | None = None
        self._lock = threading.Lock()  # searches run in worker threads

    @property
    def precision(self) -> str:
        """The provider's name: an index never mixes its vectors with runner's own."""
        return self.spec.provider

    @property
    def dimensions(self) -> int:
        """Learnt from the service's first reply (one short text is embedded to learn it)."""
        if self._dimensions is None:
            self.embed(["dimensions"])
        assert self._dimensions is not None
        return self._dimensions

    def embed(
        self, texts: Sequence[str], progress: Callable[[int, int], None] | None = None
    ) -> np.ndarray:
        size = max(1, self.spec.batch_size)
        held = [cut(text, self.spec.max_chars) for text in texts]
        rows: list[np.ndarray] = []
        for start in range(0, len(held), size):
            batch = held[start : start + size]
            rows.append(self._checked(self._vectors(batch), len(batch)))
            if progress is not None:
                progress(sum(len(found) for found in rows), len(texts))
        if not rows:
            return np.zeros((0, self._dimensions or 0), dtype=np.float32)
        return np.concatenate(rows)

    def embed_pages(
        self,
        texts: Sequence[str],
        keep: Callable[[int, np.ndarray], None],
        progress: Callable[[int, int], None] | None = None,
    ) -> np.ndarray:
        """`embed`'s vectors; a service gives no word pieces, so `keep` gets none (an index of
        a service's vectors keeps none)."""
        return self.embed(texts, progress)

    def question(self, text: str) -> tuple[np.ndarray, None]:
        """A search's question: its vector, and no word pieces (nothing to rerank with)."""
        return self.embed([text])[0], None

    def _vectors(self, texts: list[str]) -> Any:
        """The service's vectors of the texts, as it sends them (a list a text)."""
        if self.spec.provider == "ollama":
            body: dict[str, Any] = {"model": self.spec.model, "input": texts, "truncate": True}
            if self.spec.options:
                body["options"] = dict(self.spec.options)
            reply = self._post("/api/embed", body)
            try:
                return list(reply["embeddings"])
            except (KeyError, TypeError) as error:
                raise self._error(f"its reply holds no `embeddings` ({error!r})") from None
        reply = self._post("/embeddings", {"model": self.spec.model, "input": texts})
        try:
            items = sorted(reply["data"], key=lambda item: int(item.get("index", 0)))
            return [item["embedding"] for item in items]
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise self._error(f"its reply holds no list of embeddings ({error!r})") from None

    def _checked(self, sent: Any, texts: int) -> np.ndarray:
        """The vectors sent for `texts` texts as unit-length float32 rows, after checking that
        there is one a text and that all have the dimensions of the first reply."""
        try:
            vectors = np.array([_pooled(item) for item in sent], dtype=np.float32)
        except (TypeError, ValueError) as error:
            raise self._error(f"its reply holds no list of embeddings ({error})") from None
        if vectors.ndim != 2 or len(vectors) != texts or vectors.shape[1] == 0:
            raise self._error(f"it sent {len(vectors)} vectors for {texts} texts")
        with self._lock:
            if self._dimensions is None:
                self._dimensions = int(vectors.shape[1])
        if vectors.shape[1] != self._dimensions:
            raise self._error(
                f"it sent vectors of {self._dimensions} dimensions, then of {vectors.shape[1]}"
            )
        norms = np.clip(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12, None)
        return vectors / norms

    def _post(self, path: str, body: dict[str, Any]) -> Any:
        """The reply of POST `api_base + path`, tried again (with backoff) on 429, 5xx or a
        timeout."""
        return endpoint.post_json(
            f"{self.spec.api_base.rstrip('/')}{path}",
            body,
            timeout_s=self.timeout_s,
            key_env=self.spec.api_key_env,
            error=self._error,
        )

    def _error(self, problem: str) -> EmbeddingServiceError:
        return EmbeddingServiceError(f"{self.spec.where} (model {self.spec.model!r}): {problem}")


def _pooled(embedding: Any) -> np.ndarray:
    """A text's vector: as sent, or the mean of its tokens' where the service sends a vector a
    token (llama.cpp's server on a model that pools nothing, a chat model's GGUF)."""
    rows = np.asarray(embedding, dtype=np.float32)
    return rows.mean(axis=0) if rows.ndim == 2 else rows
