"""An embedder that asks a service: an OpenAI-compatible `/v1/embeddings` endpoint (vLLM,
llama.cpp's server started with `--embedding`, Ollama's `/v1`, TEI, OpenAI), named by a corpus's
`embedding: {provider: openai_like, api_base, model, api_key_env}`.

Its vectors are stored under an identity that names the provider, the model and the endpoint
(`openai_like:MODEL@API_BASE`): a change of any of them re-embeds the pages, and an index never
mixes a service's vectors with runner's own. An embeddings endpoint gives one vector a text, not
a vector a word piece, so a corpus embedded by a service does not rerank (validation refuses a
`rerank` above 0 with a provider, R133).

The standard library's urllib speaks HTTP here: nothing beyond numpy is needed.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from runner.embedding.catalog import ModelUnavailable, is_remote

BATCH = 64  # texts a request
TIMEOUT_S = 60.0  # a request's bound
ATTEMPTS = 4  # a request tried at most this often on 429, 5xx or a timeout
BACKOFF_S = 0.5  # before the second attempt; doubled before each next
_RETRIED = {429, 500, 502, 503, 504}


@dataclass(frozen=True)
class RemoteSpec:
    """Where a service embeds: `provider`, its `api_base`, the `model` it serves, and the
    environment variable holding its key (None: no key sent)."""

    provider: str
    api_base: str
    model: str
    api_key_env: str | None = None

    @property
    def identity(self) -> str:
        """The name the index stores the vectors under."""
        return f"{self.provider}:{self.model}@{self.api_base.rstrip('/')}"


_DECLARED: dict[str, RemoteSpec] = {}


def declare(spec: RemoteSpec) -> str:
    """Remembers the service behind an identity (its key's variable is not part of it) and
    returns the identity, which the index then names the vectors by."""
    _DECLARED[spec.identity] = spec
    return spec.identity


def spec_of(identity: str) -> RemoteSpec:
    """The service an identity names: as declared, else read back from the identity."""
    if identity in _DECLARED:
        return _DECLARED[identity]
    provider, _, rest = identity.partition(":")
    model, _, api_base = rest.partition("@")
    return RemoteSpec(provider, api_base, model)


__all__ = ["RemoteEmbedder", "RemoteSpec", "declare", "is_remote", "load_remote", "spec_of"]


class EmbeddingServiceError(ModelUnavailable):
    """The service could not embed: unreachable, refusing, or answering something else."""


class RemoteEmbedder:
    """Texts in, unit-length float32 vectors out, from the service; batched, retried, bounded."""

    def __init__(self, spec: RemoteSpec, timeout_s: float = TIMEOUT_S) -> None:
        self.spec = spec
        self.name = spec.identity
        self.timeout_s = timeout_s
        self._dimensions: int | None = None

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
        batches = [list(texts[start : start + BATCH]) for start in range(0, len(texts), BATCH)]
        rows: list[np.ndarray] = []
        for batch in batches:
            rows.append(self._request(batch))
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
        a service's vectors keeps none: its corpus does not rerank)."""
        return self.embed(texts, progress)

    def question(self, text: str) -> tuple[np.ndarray, None]:
        """A search's question: its vector, and no word pieces (nothing to rerank with)."""
        return self.embed([text])[0], None

    def _request(self, texts: list[str]) -> np.ndarray:
        reply = self._post({"model": self.spec.model, "input": texts})
        try:
            items = sorted(reply["data"], key=lambda item: int(item.get("index", 0)))
            vectors = np.array([_pooled(item["embedding"]) for item in items], dtype=np.float32)
        except (KeyError, TypeError, ValueError) as error:
            raise self._error(f"its reply holds no list of embeddings ({error})") from None
        if vectors.ndim != 2 or len(vectors) != len(texts) or vectors.shape[1] == 0:
            raise self._error(f"it sent {len(vectors)} vectors for {len(texts)} texts")
        if self._dimensions is None:
            self._dimensions = int(vectors.shape[1])
        elif vectors.shape[1] != self._dimensions:
            raise self._error(f"it sent vectors of {vectors.shape[1]}, then {self._dimensions}")
        norms = np.clip(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12, None)
        return vectors / norms

    def _post(self, body: dict[str, object]) -> dict[str, object]:
        """The reply of POST /embeddings, tried again (with backoff) on 429, 5xx or a timeout."""
        url = f"{self.spec.api_base.rstrip('/')}/embeddings"
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.spec.api_key_env, "") if self.spec.api_key_env else ""
        if self.spec.api_key_env and not key:
            raise self._error(f"the environment variable {self.spec.api_key_env} is not set")
        if key:
            headers["Authorization"] = f"Bearer {key}"
        data = json.dumps(body).encode("utf-8")
        why = ""
        for attempt in range(ATTEMPTS):
            if attempt:
                time.sleep(BACKOFF_S * 2 ** (attempt - 1))
            request = urllib.request.Request(url, data=data, headers=headers, method="POST")
            try:
                with _opener(url).open(request, timeout=self.timeout_s) as response:
                    return json.loads(response.read().decode("utf-8"))
            except urllib.error.HTTPError as error:
                why = f"HTTP {error.code}: {_text(error.read())}"
                if error.code not in _RETRIED:
                    break
            except (TimeoutError, urllib.error.URLError, ConnectionError) as error:
                why = str(getattr(error, "reason", error))
            except ValueError as error:  # not JSON
                raise self._error(f"its reply is not JSON ({error})") from None
        raise self._error(f"{why} (tried {attempt + 1} times)")

    def _error(self, problem: str) -> EmbeddingServiceError:
        return EmbeddingServiceError(
            f"embedding service {self.spec.api_base} (model {self.spec.model!r}): {problem}"
        )


def _pooled(embedding: list[float] | list[list[float]]) -> np.ndarray:
    """A text's vector: as sent, or the mean of its tokens' where the service sends a vector a
    token (llama.cpp's server on a model that pools nothing, a chat model's GGUF)."""
    rows = np.asarray(embedding, dtype=np.float32)
    return rows.mean(axis=0) if rows.ndim == 2 else rows


def _opener(url: str) -> urllib.request.OpenerDirector:
    """A service on this machine is reached directly, never through the environment's proxy."""
    host = urllib.parse.urlsplit(url).hostname or ""
    local = host in ("localhost", "::1") or host.startswith("127.")
    handlers = [urllib.request.ProxyHandler({})] if local else []
    return urllib.request.build_opener(*handlers)


def _text(body: bytes) -> str:
    return body.decode("utf-8", "replace").strip()[:200]


_LOADED: dict[str, RemoteEmbedder] = {}


def load_remote(identity: str) -> RemoteEmbedder:
    """The embedder of a service, one a process (it keeps the dimensions it learnt)."""
    if identity not in _LOADED:
        _LOADED[identity] = RemoteEmbedder(spec_of(identity))
    return _LOADED[identity]
