"""The pipeline the benches ask their question sets of (bench.faq, bench.eval, bench.gatekeeper):
one corpus linked into the pipeline's folder, a `retrieve` tool, the offline provider, and the
deep fallback with the offline gatekeeper, as a help desk over documentation is set up."""

from __future__ import annotations

from typing import Any

import yaml


def deep_fallback_pipeline(
    *,
    domain: str,
    corpus: str,
    include: str,
    path: str = "docs",
    top_k: int = 5,
    mode: str | None = None,
    embedding: str | None = None,
    state_dir: str | None = None,
) -> str:
    """The pipeline's YAML. `path` is the corpus's folder, a link to the documents (hence
    `follow_symlinks`); `mode` the retrieve tool's search (its default when None); `embedding`
    the corpus's model, when it keeps page vectors."""
    folder: dict[str, Any] = {
        "path": path,
        "follow_symlinks": True,
        "include": [include],
        "pages": {"max_words": 250},
    }
    if embedding is not None:
        folder["embedding"] = {"model": embedding}
    retrieve: dict[str, Any] = {
        "name": "docs_rag",
        "kind": "retrieve",
        "description": "The best pages.",
        "corpus": corpus,
        "top_k": top_k,
    }
    if mode is not None:
        retrieve["mode"] = mode
    pipeline: dict[str, Any] = {
        "version": 1,
        "domain": domain,
        "llm": {"provider": "offline"},
        "prompt_types": {
            "default": "question",
            "classify": "rule",
            "types": {"question": "A question about the docs."},
        },
        "corpora": {corpus: folder},
        "retrieval_tool": "docs_rag",
        "deep_fallback": {
            "coordinator": "deep_search",
            "prompt_types": ["question"],
            "gatekeeper": {"mode": "llm"},
        },
        "tools": [retrieve, *deep_search_tools(corpus)],
    }
    if state_dir is not None:
        pipeline["state_dir"] = state_dir
    return yaml.safe_dump(pipeline, sort_keys=False, allow_unicode=True)


def deep_search_tools(corpus: str) -> list[dict[str, Any]]:
    """The deep fallback's coordinator and the search tool it asks about the corpus."""
    return [
        {
            "name": "docs_search",
            "kind": "search",
            "description": "Answers a focused question from the docs.",
            "activation": "coordinator_only",
            "corpus": corpus,
            "top_k": 4,
            "max_brute_force_page_count": 40,
        },
        {
            "name": "deep_search",
            "kind": "deep_search",
            "description": "Finds what the first pages did not answer.",
            "search_tool": "docs_search",
            "max_missing": 2,
        },
    ]
