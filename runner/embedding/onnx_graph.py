"""The ONNX graph of a BERT encoder, built from its safetensors weights with the `onnx` package:
the same arithmetic as runner/embedding/bert.py (embeddings, six layers of attention and
feed-forward, layer norms), written as ONNX operators with the weights as initializers, so that
onnxruntime can run it. No torch and no export step: the graph is a few dozen nodes a layer
made here, in about a second.

Inputs `input_ids` and `attention_mask` (int64, batch × tokens); output `hidden` (batch × tokens
× hidden), which the embedder pools as it pools numpy's.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from runner.embedding.bert import BertShape, weight_reader

OPSET = 20  # Gelu is an ONNX operator from opset 20; LayerNormalization from 17
_PADDING_SCORE = -1e9  # added to the attention scores of padding, as bert.py does


class _Graph:
    """Nodes and initializers as they are added; names are made unique by a counter."""

    def __init__(self) -> None:
        from onnx import helper, numpy_helper

        self._helper, self._numpy_helper = helper, numpy_helper
        self.nodes: list[Any] = []
        self.initializers: list[Any] = []
        self._count = 0

    def _name(self, hint: str) -> str:
        self._count += 1
        return f"{hint}_{self._count}"

    def constant(self, array: np.ndarray, hint: str = "const") -> str:
        name = self._name(hint)
        self.initializers.append(self._numpy_helper.from_array(array, name))
        return name

    def op(self, op_type: str, *inputs: str, **attributes: Any) -> str:
        output = self._name(op_type.lower())
        node = self._helper.make_node(op_type, list(inputs), [output], name=output, **attributes)
        self.nodes.append(node)
        return output


def build_bert_graph(shape: BertShape, weights: Mapping[str, np.ndarray]) -> Any:
    """An `onnx.ModelProto` computing a BERT encoder's last hidden state."""
    from onnx import TensorProto, helper

    weight = weight_reader(weights)
    graph = _Graph()
    x = _embeddings(graph, weight, shape.epsilon)
    padding = _padding_scores(graph)
    for index in range(shape.layers):
        x = _layer(graph, weight, f"encoder.layer.{index}.", shape, x, padding)
    graph.nodes[-1].output[0] = "hidden"
    tokens = ["batch", "tokens"]
    inputs = [
        helper.make_tensor_value_info("input_ids", TensorProto.INT64, tokens),
        helper.make_tensor_value_info("attention_mask", TensorProto.INT64, tokens),
    ]
    output = helper.make_tensor_value_info("hidden", TensorProto.FLOAT, [*tokens, shape.hidden])
    body = helper.make_graph(graph.nodes, "bert", inputs, [output], graph.initializers)
    return helper.make_model(
        body, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="runner"
    )


def _embeddings(graph: _Graph, weight: Callable[[str], np.ndarray], epsilon: float) -> str:
    """Word + position + token type 0 embeddings, layer-normed: (batch, tokens, hidden)."""
    words = graph.op(
        "Gather", graph.constant(weight("embeddings.word_embeddings.weight")), "input_ids"
    )
    # the position rows and token type 0 summed once: a constant, sliced to the batch's length
    positions = weight("embeddings.position_embeddings.weight")
    positions = positions + weight("embeddings.token_type_embeddings.weight")[0]
    length = graph.op(
        "Slice",
        graph.op("Shape", "input_ids"),
        graph.constant(np.array([1], dtype=np.int64)),
        graph.constant(np.array([2], dtype=np.int64)),
    )
    zero = graph.constant(np.array([0], dtype=np.int64))
    sliced = graph.op("Slice", graph.constant(positions, "positions"), zero, length, zero)
    return _layer_norm(
        graph, weight, "embeddings.LayerNorm.", graph.op("Add", words, sliced), epsilon
    )


def _padding_scores(graph: _Graph) -> str:
    """(batch, 1, 1, tokens): 0 for a token, -1e9 for padding, added to every head's scores."""
    mask = graph.op("Cast", "attention_mask", to=1)  # 1: float32
    unmasked = graph.op("Sub", graph.constant(np.array(1.0, dtype=np.float32)), mask)
    scores = graph.op("Mul", unmasked, graph.constant(np.array(_PADDING_SCORE, dtype=np.float32)))
    return graph.op("Unsqueeze", scores, graph.constant(np.array([1, 2], dtype=np.int64)))


def _layer_norm(
    graph: _Graph, weight: Callable[[str], np.ndarray], prefix: str, x: str, epsilon: float
) -> str:
    scale, bias = weight(prefix + "weight"), weight(prefix + "bias")
    return graph.op(
        "LayerNormalization",
        x,
        graph.constant(scale),
        graph.constant(bias),
        axis=-1,
        epsilon=epsilon,
    )


def _dense(graph: _Graph, x: str, matrix: np.ndarray, bias: np.ndarray) -> str:
    """x @ matrix.T + bias, with torch's (out, in) matrix stored transposed once."""
    product = graph.op("MatMul", x, graph.constant(np.ascontiguousarray(matrix.T), "weight"))
    return graph.op("Add", product, graph.constant(bias, "bias"))


def _layer(
    graph: _Graph,
    weight: Callable[[str], np.ndarray],
    prefix: str,
    shape: BertShape,
    x: str,
    padding: str,
) -> str:
    def w(name: str) -> np.ndarray:
        return weight(prefix + name)

    heads, size = shape.heads, shape.hidden // shape.heads
    parts = ("query", "key", "value")
    qkv = _dense(  # query, key and value in one product, as bert.py computes them
        graph,
        x,
        np.concatenate([w(f"attention.self.{part}.weight") for part in parts]),
        np.concatenate([w(f"attention.self.{part}.bias") for part in parts]),
    )
    split = graph.op(
        "Reshape", qkv, graph.constant(np.array([0, 0, 3, heads, size], dtype=np.int64))
    )
    stacked = graph.op("Transpose", split, perm=[2, 0, 3, 1, 4])  # (3, batch, heads, tokens, size)
    query, key, value = (
        graph.op("Gather", stacked, graph.constant(np.array(part, dtype=np.int64)), axis=0)
        for part in range(3)
    )
    scores = graph.op("MatMul", query, graph.op("Transpose", key, perm=[0, 1, 3, 2]))
    scale = graph.constant(np.array(1.0 / math.sqrt(size), dtype=np.float32))
    scores = graph.op("Add", graph.op("Mul", scores, scale), padding)
    context = graph.op("MatMul", graph.op("Softmax", scores, axis=-1), value)
    context = graph.op("Transpose", context, perm=[0, 2, 1, 3])
    context = graph.op(
        "Reshape", context, graph.constant(np.array([0, 0, shape.hidden], dtype=np.int64))
    )
    attended = _dense(
        graph, context, w("attention.output.dense.weight"), w("attention.output.dense.bias")
    )
    x = _layer_norm(
        graph,
        weight,
        prefix + "attention.output.LayerNorm.",
        graph.op("Add", attended, x),
        shape.epsilon,
    )
    wide = graph.op(
        "Gelu", _dense(graph, x, w("intermediate.dense.weight"), w("intermediate.dense.bias"))
    )
    narrow = _dense(graph, wide, w("output.dense.weight"), w("output.dense.bias"))
    return _layer_norm(
        graph, weight, prefix + "output.LayerNorm.", graph.op("Add", narrow, x), shape.epsilon
    )
