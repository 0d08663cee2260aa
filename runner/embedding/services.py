"""The embedder of a service a corpus names (`embedding.provider`): over HTTP (remote.py:
openai_like, ollama) or through a llama-index class (class_embedder.py), one a process."""

from __future__ import annotations

import threading

from runner.embedding.class_embedder import ClassEmbedder
from runner.embedding.remote import RemoteEmbedder, RemoteSpec, spec_of


def embedder_for(spec: RemoteSpec, timeout_s: float | None = None) -> RemoteEmbedder:
    """A new embedder of the service, each request waited for `timeout_s` (None: the spec's)."""
    if spec.provider == "llama_index":
        return ClassEmbedder(spec, timeout_s)
    return RemoteEmbedder(spec, timeout_s)


_LOADED: dict[str, RemoteEmbedder] = {}
_LOADING = threading.Lock()  # searches run in worker threads


def load_remote(identity: str) -> RemoteEmbedder:
    """The embedder of a service, one a process (it keeps the dimensions it learnt)."""
    with _LOADING:
        if identity not in _LOADED:
            _LOADED[identity] = embedder_for(spec_of(identity))
        return _LOADED[identity]
