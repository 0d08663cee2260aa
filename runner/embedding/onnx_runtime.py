"""A BERT encoder run by onnxruntime: the graph runner/embedding/onnx_graph.py builds from the
model's weights, optionally with its matrix products quantized to int8 (onnxruntime's dynamic
quantization), built once and cached.

The cache is a file per model and variant, named by a digest of the model's weights, the graph's
version and (for int8) onnxruntime's version, in `$RUNNER_CACHE_DIR/embedding/` (default
`$XDG_CACHE_HOME/runner`, else `~/.cache/runner`). Nothing is downloaded: a first use builds
the file from the weights in a few seconds. Where the cache cannot be written, the graph is
built in a temporary folder each time instead.

A later process finds the file without reading the weights (90 MB, inflated from the model's
zip: a second, and 180 MB of memory): `weights/` beside the graphs keeps, per version of the
weights' file (its place, size, time and CRC), the digest and the longest input they were
found to have.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from runner.embedding.bert import BertShape, max_positions

# Bumped whenever onnx_graph.py computes differently: a cached graph of another version is
# not reused.
GRAPH_VERSION = "2"  # 2: the weights in a file of their own beside the graph (mapped, not read)
# per channel: one scale per output column of a weight matrix; with one scale per matrix the
# vectors drifted to a mean cosine of 0.93 with float32's on the Python docs, against 0.994
QUANTIZATION = "MatMul weights QInt8 per channel"


def cache_folder() -> Path:
    configured = os.environ.get("RUNNER_CACHE_DIR")
    if configured:
        return Path(configured) / "embedding"
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "runner" / "embedding"


class Weights(Protocol):
    """A model's weights, read lazily (runner.embedding.models.LazyWeights)."""

    @property
    def identity(self) -> str: ...  # tells one version from another without reading them

    @property
    def digest(self) -> str: ...  # the sha256 of the weights' file: reads it

    @property
    def arrays(self) -> Mapping[str, np.ndarray]: ...  # reads and parses it

    def forget(self) -> None: ...


class OnnxEncoder:
    """Token ids in, the last hidden state out, like `BertEncoder`, on onnxruntime.

    One onnxruntime thread a call: the embedder runs one batch a core at once, which on the
    shared two-core machine of docs/retrieval.md was faster than onnxruntime's own threads."""

    def __init__(self, shape: BertShape, weights: Weights, variant: str) -> None:
        import onnxruntime

        self.shape = shape
        self.variant = variant
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        self.session, self.max_positions = _cached_session(shape, weights, variant, options)

    def hidden_states(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """(batch, tokens, hidden) for token ids (batch, tokens) and a 0/1 float32 mask.

        int8 runs one text at a time, without its padding: its activations are quantized with
        one scale for everything in a run, so in a batch a text's vector would depend on the
        texts beside it (and a question, embedded alone, would not meet its page's vector).
        One text a run costs nothing measurable: 36 pages a second either way on 400 pages of
        the Python docs."""
        if self.variant != "int8":
            return self._run(ids, mask.astype(np.int64))
        states = np.zeros((*ids.shape, self.shape.hidden), dtype=np.float32)
        for row, length in enumerate(mask.sum(1).astype(int)):
            states[row, :length] = self._run(
                ids[row : row + 1, :length], np.ones((1, length), dtype=np.int64)
            )[0]
        return states

    def _run(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return self.session.run(["hidden"], {"input_ids": ids, "attention_mask": mask})[0]


def cache_key(weights_digest: str, variant: str) -> str:
    import onnxruntime

    parts = [weights_digest, GRAPH_VERSION, variant]
    if variant == "int8":  # the quantizer's output may change with onnxruntime
        parts += [onnxruntime.__version__, QUANTIZATION]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:24]


def _cached_session(
    shape: BertShape, weights: Weights, variant: str, options: Any
) -> tuple[Any, int]:
    """The session on the cached graph, and the longest input the model takes. A graph built
    before is found by the weights' identity (a memo of their digest): the weights are then
    not read at all."""
    import onnxruntime

    memo = _read_memo(weights.identity)
    if memo is not None:
        path = graph_path(memo["sha256"], variant)
        if path.is_file() and weights_path(path).is_file():
            session = onnxruntime.InferenceSession(str(path), options, providers=_CPU)
            return session, int(memo["max_positions"])
    positions = max_positions(weights.arrays)
    path = graph_path(weights.digest, variant)
    try:
        if not (path.is_file() and weights_path(path).is_file()):
            path.parent.mkdir(parents=True, exist_ok=True)
            _build(shape, weights.arrays, variant, path)
        _write_memo(weights.identity, weights.digest, positions)
    except OSError:  # a read-only home: build where it can be written, and not keep it
        with tempfile.TemporaryDirectory(prefix="runner-onnx-") as folder:
            built = Path(folder) / path.name
            _build(shape, weights.arrays, variant, built)
            session = onnxruntime.InferenceSession(str(built), options, providers=_CPU)
    else:
        session = onnxruntime.InferenceSession(str(path), options, providers=_CPU)
    weights.forget()
    return session, positions


def graph_path(weights_digest: str, variant: str) -> Path:
    return cache_folder() / f"{cache_key(weights_digest, variant)}-{variant}.onnx"


def weights_path(graph: Path) -> Path:
    """The file of the graph's weights, beside it. onnxruntime maps a graph's external weights
    into memory instead of reading them into the parsed graph and copying them again: a
    session of the int8 graph (58 MB, mostly the float32 word embeddings) costs a process
    about 22 MB instead of 111 MB, and the processes of one machine (serve's workers) share
    the pages."""
    return graph.with_name(graph.name + ".data")


def _memo_path(identity: str) -> Path:
    named = hashlib.sha256(identity.encode()).hexdigest()[:24]
    return cache_folder() / "weights" / f"{named}.json"


def _read_memo(identity: str) -> dict[str, Any] | None:
    """What a process that read these weights found: their sha256 and positions."""
    try:
        memo = json.loads(_memo_path(identity).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(memo, dict) or memo.get("identity") != identity:
        return None
    if not isinstance(memo.get("sha256"), str) or not isinstance(memo.get("max_positions"), int):
        return None
    return memo


def _write_memo(identity: str, digest: str, positions: int) -> None:
    path = _memo_path(identity)
    path.parent.mkdir(parents=True, exist_ok=True)
    memo = {"identity": identity, "sha256": digest, "max_positions": positions}
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(json.dumps(memo), encoding="utf-8")
    os.replace(temporary, path)


_CPU = ["CPUExecutionProvider"]


def _build(shape: BertShape, weights: Mapping[str, np.ndarray], variant: str, path: Path) -> None:
    """The graph written to `path` and its weights beside it (`weights_path`), each atomically
    (a rename), so that two processes building it at once each leave whole files."""
    import onnx

    from runner.embedding.onnx_graph import build_bert_graph

    model = build_bert_graph(shape, weights)
    with tempfile.TemporaryDirectory(prefix=".building-", dir=path.parent) as folder:
        built = Path(folder) / "model.onnx"
        if variant == "int8":
            fp32 = Path(folder) / "fp32.onnx"
            onnx.save(model, fp32)
            _quantize(fp32, built)
            model = onnx.load(built)
        split = Path(folder) / "split.onnx"
        data = weights_path(path)
        onnx.save_model(
            model, split, save_as_external_data=True, all_tensors_to_one_file=True,
            location=data.name, size_threshold=1024,
        )  # fmt: skip
        # the weights first: a graph file is only ever there with its weights beside it
        os.replace(Path(folder) / data.name, data)
        os.replace(split, path)


def _quantize(source: Path, target: Path) -> None:
    """Dynamic int8: the weights of every product with a weight matrix stored as int8 (a scale
    per column), the activations quantized on the fly; the attention's own products and the
    embeddings stay float32."""
    import logging

    from onnxruntime.quantization import QuantType, quantize_dynamic

    quiet = logging.getLogger()
    level = quiet.level
    quiet.setLevel(logging.ERROR)  # its advice to pre-process the graph concerns other models
    try:
        quantize_dynamic(
            source,
            target,
            op_types_to_quantize=["MatMul"],
            weight_type=QuantType.QInt8,
            per_channel=True,
        )
    finally:
        quiet.setLevel(level)
