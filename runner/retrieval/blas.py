"""Small matrix products on one BLAS thread.

A search's products are small (a question's vector against a corpus's page vectors, its word
pieces against 20 candidates'): on BLAS's own threads they cost more than they save, and far
more on a loaded machine, where the threads wait for cores (measured on two busy cores: 25 ms
against 3 ms for 8,379 page vectors, 27 against 13 ms for a rerank's cosine table). threadpoolctl
(part of the `embed` extra) holds BLAS to one thread.

The limit is set once, at a process's first search product, and kept: putting BLAS's threads
back after each product cost ~0.3 ms a time, two a hybrid search, and every product runner
makes wants one thread anyway (an embedding batch runs on one thread a core,
runner/embedding/models.py). A program that embeds runner and wants BLAS's threads for its own
products can raise the limit again with threadpoolctl.
"""

from __future__ import annotations

import functools
from contextlib import AbstractContextManager, nullcontext
from typing import Any


def one_blas_thread() -> AbstractContextManager[None]:
    """BLAS on one thread for the `with` block and, from then on, the process (as it was when
    threadpoolctl is missing)."""
    _held()
    return nullcontext()


@functools.cache
def _held() -> Any:
    """The process's BLAS limit of one thread, set on the first call and kept (the limiter is
    never exited); None without threadpoolctl."""
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return None
    return ThreadpoolController().limit(limits=1, user_api="blas")
