"""The runtimes that run all-MiniLM-L6-v2 (runner/embedding/models.py): onnxruntime on the ONNX
graph runner builds from the weights gives numpy's vectors; int8 stays close to them."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from runner.embedding import DEFAULT_MODEL, ModelUnavailable
from tests.embed.conftest import require_model

TEXTS = [
    "How do I descale a kettle?",
    "The kettle switches itself off when the water boils. Descale it monthly in hard-water "
    "areas: fill it half full with equal parts of water and white vinegar, boil, leave it "
    "for an hour, then rinse twice with fresh water. " * 6,
    "str.strip() returns a copy of the string with leading and trailing whitespace removed.",
    "x",
]


def runtime_embedder(runtime: str):
    from runner.embedding.catalog import locate
    from runner.embedding.models import Embedder, onnx_installed

    if runtime != "numpy" and not onnx_installed():
        require_model(ModelUnavailable("onnxruntime and onnx are not installed"))
    try:
        return Embedder(DEFAULT_MODEL, locate(DEFAULT_MODEL), runtime)
    except (ModelUnavailable, ImportError) as error:
        require_model(error)


@pytest.fixture(scope="module")
def numpy_vectors() -> np.ndarray:
    return runtime_embedder("numpy").embed(TEXTS)


def test_onnxruntime_on_float32_gives_the_numpy_pass_s_vectors(numpy_vectors) -> None:
    vectors = runtime_embedder("onnx").embed(TEXTS)
    assert ((vectors * numpy_vectors).sum(1) >= 0.99999).all()


def test_int8_vectors_stay_within_a_cosine_of_0_97_of_float32_s(numpy_vectors) -> None:
    cosines = (runtime_embedder("onnx-int8").embed(TEXTS) * numpy_vectors).sum(1)
    assert cosines.min() >= 0.97 and cosines.mean() >= 0.98


def test_with_onnxruntime_installed_the_default_runtime_is_int8(embedder) -> None:
    from runner.embedding.models import onnx_installed

    if not onnx_installed():
        require_model(ModelUnavailable("onnxruntime and onnx are not installed"))
    assert embedder.runtime == "onnx-int8"


def test_the_graph_is_built_once_into_the_cache_and_read_from_it_after(onnx_cache) -> None:
    runtime_embedder("onnx")
    cached = sorted(onnx_cache.glob("embedding/*-fp32.onnx"))
    stamp = cached[0].stat().st_mtime_ns
    runtime_embedder("onnx")
    assert len(cached) == 1 and cached[0].stat().st_mtime_ns == stamp


def test_the_cached_graph_keeps_its_weights_in_a_file_beside_it(onnx_cache) -> None:
    import onnx

    runtime_embedder("onnx")
    [graph] = onnx_cache.glob("embedding/*-fp32.onnx")
    weights = graph.with_name(graph.name + ".data")  # mapped by onnxruntime, not read
    assert weights.stat().st_size > 10 * graph.stat().st_size
    initializers = onnx.load(graph, load_external_data=False).graph.initializer
    assert all(tensor.data_location == onnx.TensorProto.EXTERNAL for tensor in initializers
               if tensor.ByteSize() > 4096)  # fmt: skip


def test_a_built_graph_is_found_again_without_reading_the_weights(monkeypatch) -> None:
    from runner.embedding.catalog import ModelFiles

    before = runtime_embedder("onnx-int8").embed(TEXTS)
    read = ModelFiles.read

    def no_weights(files: ModelFiles, name: str) -> bytes | None:
        assert name != "model.safetensors", "the weights were read though the graph is built"
        return read(files, name)

    monkeypatch.setattr(ModelFiles, "read", no_weights)
    again = runtime_embedder("onnx-int8")
    assert again.encoder.max_positions == 512
    assert np.array_equal(again.embed(TEXTS), before)


def test_a_cache_that_cannot_be_written_still_gives_the_vectors(
    tmp_path, monkeypatch, numpy_vectors
) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    monkeypatch.setenv("RUNNER_CACHE_DIR", str(blocked))
    vectors = runtime_embedder("onnx").embed(TEXTS)
    assert ((vectors * numpy_vectors).sum(1) >= 0.99999).all()


def test_an_unknown_runtime_in_the_environment_is_refused_with_the_choices(monkeypatch) -> None:
    from runner.embedding.models import default_runtime

    monkeypatch.setenv("RUNNER_EMBED_RUNTIME", "gpu")
    with pytest.raises(ModelUnavailable, match="onnx-int8, onnx, numpy"):
        default_runtime()


def test_the_environment_picks_the_numpy_runtime(monkeypatch) -> None:
    from runner.embedding.models import default_runtime

    monkeypatch.setenv("RUNNER_EMBED_RUNTIME", "numpy")
    assert default_runtime() == "numpy"


def test_without_onnxruntime_the_default_runtime_is_numpy(monkeypatch, request) -> None:
    from runner.embedding.models import default_runtime, onnx_installed

    monkeypatch.delenv("RUNNER_EMBED_RUNTIME", raising=False)
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # as if it were not installed
    onnx_installed.cache_clear()  # looked up once a process: again, as a new process would
    request.addfinalizer(onnx_installed.cache_clear)
    assert default_runtime() == "numpy"
