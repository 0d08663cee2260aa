"""A rerank endpoint reorders a search's first candidates: a corpus's `embedding.rerank`
written as a mapping names it instead of a count.

    rerank:
      provider: tei                  # or cohere_like
      api_base: http://127.0.0.1:8081
      model: BAAI/bge-reranker-base  # cohere_like: the model the service serves
      candidates: 20

Two request shapes, by `provider`, both `POST {api_base}/rerank`:

- `tei` (Hugging Face Text Embeddings Inference): `{query, texts, truncate: true}` ->
  `[{index, score}, ...]`;
- `cohere_like` (Cohere, Jina, llama.cpp's server with `--reranking`, vLLM):
  `{model, query, documents, top_n}` -> `{results: [{index, relevance_score}, ...]}`.

A cross-encoder reads the question and each page together and is trained to score exactly
that, so its scores order the candidates alone (runner's own word-by-word rerank, rerank.py,
joins the search's scores instead: alone it was worse than the search). Bounded and retried as
the embedding services are (endpoint.py); each text held to `max_chars`; the same question
over the same candidates scored once a process.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from runner.embedding import endpoint
from runner.embedding.catalog import ModelUnavailable
from runner.embedding.endpoint import cut

RERANK_PROVIDERS = ("tei", "cohere_like")
TIMEOUT_S = 30.0  # a request's bound (`timeout_s`)
MAX_CHARS = 4000  # a text's characters at most (`max_chars`)


class RerankServiceError(ModelUnavailable):
    """The rerank endpoint could not score: unreachable, refusing, or answering otherwise."""


@dataclass(frozen=True)
class RerankSpec:
    """A rerank endpoint: its request shape (`provider`), where, the model, the key's
    environment variable, and its bounds."""

    provider: str
    api_base: str
    model: str | None = None
    api_key_env: str | None = None
    timeout_s: float = TIMEOUT_S
    max_chars: int = MAX_CHARS

    @classmethod
    def of(cls, written: Mapping[str, Any]) -> RerankSpec:
        """The endpoint a corpus's `embedding.rerank` mapping names (validated), each key left
        out taking its default here."""
        return cls(
            str(written["provider"]),
            str(written["api_base"]),
            written.get("model"),
            written.get("api_key_env"),
            float(written.get("timeout_s", TIMEOUT_S)),
            int(written.get("max_chars", MAX_CHARS)),
        )


def scores(spec: RerankSpec, query: str, texts: Sequence[str]) -> list[float]:
    """The endpoint's score of each text for the query, in the texts' order."""
    held = [cut(text, spec.max_chars) for text in texts]
    if not held:
        return []
    url = f"{spec.api_base.rstrip('/')}/rerank"

    def error(problem: str) -> RerankServiceError:
        return RerankServiceError(f"rerank endpoint {url} (model {spec.model!r}): {problem}")

    if spec.provider == "tei":
        body: dict[str, Any] = {"query": query, "texts": held, "truncate": True}
    else:
        body = {"model": spec.model, "query": query, "documents": held, "top_n": len(held)}
    reply = endpoint.post_json(
        url, body, timeout_s=spec.timeout_s, key_env=spec.api_key_env, error=error
    )
    try:
        results = reply if spec.provider == "tei" else reply["results"]
        field = "score" if spec.provider == "tei" else "relevance_score"
        found = {int(item["index"]): float(item[field]) for item in results}
    except (KeyError, TypeError, ValueError) as bad:
        shape = "[{index, score}]" if spec.provider == "tei" else "{results: [{index, ...}]}"
        raise error(f"its reply is not {shape} ({bad!r}); is `provider` its shape?") from None
    missing = [row for row in range(len(held)) if row not in found]
    if missing:
        raise error(f"it scored {len(held) - len(missing)} of the {len(held)} texts sent")
    return [found[row] for row in range(len(held))]


CACHED = 256  # the last searches' scores kept: a round often asks the same question twice
_SCORED: OrderedDict[tuple[RerankSpec, str, tuple[str, ...]], list[float]] = OrderedDict()
_SCORING = threading.Lock()  # searches run in worker threads


def reranked(spec: RerankSpec, query: str, texts: Sequence[str]) -> list[tuple[int, float]]:
    """(candidate, the endpoint's score) for each candidate, best first (ties keep the
    search's order). The same question over the same candidates is scored once (the last
    CACHED searches are kept)."""
    key = (spec, query, tuple(texts))
    with _SCORING:
        known = _SCORED.get(key)
    scored = known if known is not None else scores(spec, query, texts)
    with _SCORING:
        _SCORED[key] = scored
        _SCORED.move_to_end(key)
        while len(_SCORED) > CACHED:
            _SCORED.popitem(last=False)
    order = sorted(range(len(scored)), key=lambda row: -scored[row])
    return [(row, scored[row]) for row in order]
