"""A corpus searched by meaning (`mode: vector` / `hybrid`) where the embedding model cannot run
(the `embed` extra or the model's package is not installed): it is searched by words alone
(BM25), and the process says so once, whichever corpus or round comes first, rather than
failing, or repeating it on every question."""

from __future__ import annotations

import logging
import threading

from runner.embedding.catalog import INSTALL_HINT, ModelUnavailable, is_remote, unavailable
from runner.retrieval.pages import CorpusError

log = logging.getLogger("runner.retrieval")
# what a search or a cosine by meaning raises when it cannot be made here (the model gone, or
# its vectors unreadable, since the index was built): the pages are then read by their words
CANNOT_EMBED = (CorpusError, ModelUnavailable, ImportError)
_said = threading.Event()


def runnable_model(corpus: str, model: str | None) -> tuple[str | None, str | None]:
    """(the model to keep page vectors of, why the corpus is searched by words alone): the model
    and None when it can run here; None and the reason (said once a process) when not."""
    if model is None:
        return None, None
    if is_remote(model):  # a service embeds: nothing to install here
        return model, None
    reason = unavailable(model)
    if reason is None:
        return model, None
    if not _said.is_set():
        _said.set()
        log.warning(
            "warning: corpus %r is searched by words alone: search by meaning needs the "
            "embedding model %s, and %s; to search by meaning, %s",
            corpus,
            model,
            reason,
            INSTALL_HINT,
        )
    return None, reason
