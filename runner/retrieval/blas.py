"""Small matrix products on one BLAS thread.

A search's products are small (a question's vector against a corpus's page vectors, its word
pieces against 20 candidates'): on BLAS's own threads they cost more than they save, and far
more on a loaded machine, where the threads wait for cores (measured on two busy cores: 25 ms
against 3 ms for 8,379 page vectors, 27 against 13 ms for a rerank's cosine table). threadpoolctl
(part of the `embed` extra) holds BLAS to one thread while they run; its controller is made
once, since finding the loaded BLAS libraries takes half a millisecond a time.
"""

from __future__ import annotations

import functools
from contextlib import AbstractContextManager, nullcontext
from typing import Any


def one_blas_thread() -> AbstractContextManager[Any]:
    """BLAS on one thread for the `with` block (as it was when threadpoolctl is missing)."""
    controller = _controller()
    if controller is None:
        return nullcontext()
    return controller.limit(limits=1, user_api="blas")


@functools.cache
def _controller() -> Any:
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return None
    return ThreadpoolController()
