"""Where a service keeps its sessions: one store for every pipeline when the state setting
names one, else each pipeline's own file, a file two pipelines name opened once."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from runner.app import Runtime
    from runner.sessions.base import Store


def open_stores(
    runtimes: dict[str, Runtime],
    state: str | None,
    open_store: Callable[..., Store],
    store_file: str | None = None,
) -> dict[str, Store]:
    """One store for all when `state` (or RUNNER_STATE) names one; else each pipeline's
    default file (or `store_file` beside it), opened once per file."""
    from runner.sessions.open import state_setting

    stores: dict[str, Store] = {}
    chosen = state if store_file is not None else state_setting(state)
    if chosen:
        shared = open_store(state)
        return {domain: shared for domain in runtimes}
    by_location: dict[str, Store] = {}
    for domain, runtime in runtimes.items():
        pipeline = runtime.pipeline
        if store_file is not None:
            store = open_store(str(pipeline.state_folder / store_file))
        else:
            store = open_store(None, pipeline)
        if store.location in by_location:
            store.close()
            store = by_location[store.location]
        by_location[store.location] = store
        stores[domain] = store
    return stores


def distinct(stores: Iterable[Store]) -> list[Store]:
    """Each store once (pipelines that share one file share its store)."""
    seen: list[Store] = []
    for store in stores:
        if all(store is not other for other in seen):
            seen.append(store)
    return seen
