"""What a text means beside a question: the cosine of each text with it, by the model that embedded
the corpus's pages, for every reader of units (the offline answerer, a retrieval's excerpts).

The model is loaded once per process (`load_embedder`, safe from the worker threads searches run
in), so reading by meaning costs only the embedding of the units a round reads, which are kept:
the gatekeeper, the missing information and the answer of a round embed each unit once.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping, Sequence
from threading import Lock
from typing import Any

from runner.embedding import ModelUnavailable

KEPT_VECTORS = 20000  # units' vectors kept between calls (about 30 MB at 384 dimensions)

_kept: OrderedDict[tuple[str, str, str], Any] = OrderedDict()
_keeping = Lock()


def model_of(meanings: Sequence[Mapping[str, Any] | None]) -> tuple[str, str] | None:
    """(model, precision) of the first well-formed meaning among the passages', if any."""
    for meaning in meanings:
        if isinstance(meaning, Mapping) and isinstance(meaning.get("model"), str):
            return meaning["model"], str(meaning.get("precision") or "float32")
    return None


def cosines(model: tuple[str, str], question: str, texts: Sequence[str]) -> list[float] | None:
    """The cosine of each text with the question, or None when the model cannot run here (the
    extra or the model package gone): the units are then read by their words alone."""
    try:
        from runner.embedding.models import load_embedder, runtime_for

        embedder = load_embedder(model[0], runtime_for(model[1]))
        vectors = _vectors(embedder, model, [question, *texts])
    except (ModelUnavailable, ImportError, OSError):
        return None
    asked = vectors[0]
    return [float(vector @ asked) for vector in vectors[1:]]


def _vectors(embedder: Any, model: tuple[str, str], texts: list[str]) -> list[Any]:
    keys = [(model[0], model[1], text) for text in texts]
    with _keeping:
        missing = list(dict.fromkeys(key for key in keys if key not in _kept))
    if missing:
        embedded = embedder.embed([key[2] for key in missing])
        with _keeping:
            for key, vector in zip(missing, embedded, strict=True):
                _kept[key] = vector
            while len(_kept) > KEPT_VECTORS:
                _kept.popitem(last=False)
    with _keeping:
        found = {key: _kept.get(key) for key in keys}
    if any(vector is None for vector in found.values()):  # pushed out meanwhile: embed again
        return list(embedder.embed(texts))
    return [found[key] for key in keys]
