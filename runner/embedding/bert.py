"""A BERT encoder's forward pass in numpy: what a sentence-embedding model of the BERT family
(all-MiniLM-L6-v2, bge-small, e5-small…) computes, without torch or onnxruntime (the same
arithmetic as an ONNX graph for onnxruntime: runner/embedding/onnx_graph.py).

The weights are a `model.safetensors` file's arrays, read once; the arithmetic is float32
matrix products (numpy's BLAS does the work), so a page costs what the model costs, and the
install is numpy, safetensors, tokenizers and threadpoolctl (docs/retrieval.md has the figures).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

_FEED_FORWARD_ROWS = 512  # tokens per feed-forward block: the 4x wider activations stay in cache
_INV_SQRT2 = np.float32(1.0 / math.sqrt(2.0))
# erfc(z) ~ t·poly(t)·exp(-z²) with t = 1 / (1 + p·z): Abramowitz & Stegun 7.1.26 (error < 1.5e-7);
# numpy has no erf, and BERT's "gelu" is the exact one, x·Φ(x)
_ERFC_P = np.float32(0.3275911)
_ERFC_COEFFICIENTS = tuple(
    np.float32(c) for c in (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592)
)


class ModelFormatError(ValueError):
    """The model files are not a BERT encoder runner can run."""


@dataclass(frozen=True)
class BertShape:
    layers: int
    heads: int
    hidden: int
    epsilon: float

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> BertShape:
        if config.get("model_type", "bert") != "bert" or config.get("hidden_act", "gelu") != "gelu":
            raise ModelFormatError(
                f"model_type {config.get('model_type')!r} with activation "
                f"{config.get('hidden_act')!r}: runner runs BERT encoders with `gelu`"
            )
        return cls(
            layers=int(config["num_hidden_layers"]),
            heads=int(config["num_attention_heads"]),
            hidden=int(config["hidden_size"]),
            epsilon=float(config.get("layer_norm_eps", 1e-12)),
        )


def weight_reader(weights: Mapping[str, np.ndarray]) -> Callable[[str], np.ndarray]:
    """A model's float32 arrays by their name without the `bert.` some checkpoints prefix."""
    found = {name.removeprefix("bert."): array for name, array in weights.items()}

    def weight(name: str) -> np.ndarray:
        if name not in found:
            raise ModelFormatError(f"the weights have no {name!r}: not a BERT encoder")
        return np.ascontiguousarray(found[name], dtype=np.float32)

    return weight


def max_positions(weights: Mapping[str, np.ndarray]) -> int:
    """The longest input the model's position embeddings cover."""
    return int(weight_reader(weights)("embeddings.position_embeddings.weight").shape[0])


def layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, epsilon: float) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    centred = x - mean
    variance = (centred * centred).mean(-1, keepdims=True)
    return centred / np.sqrt(variance + epsilon) * weight + bias


def gelu_in_place(x: np.ndarray) -> np.ndarray:
    """x·Φ(x) on float32, in place: max(x, 0) − |x|·Φ(−|x|), Φ(−|x|) = erfc(|x|/√2) / 2."""
    z = np.abs(x)
    z *= _INV_SQRT2
    t = z * _ERFC_P
    t += 1.0
    np.reciprocal(t, out=t)
    tail = t * _ERFC_COEFFICIENTS[0]
    for coefficient in _ERFC_COEFFICIENTS[1:]:
        tail += coefficient
        tail *= t
    np.square(z, out=z)
    np.negative(z, out=z)
    np.exp(z, out=z)
    tail *= z
    tail *= np.float32(0.5)
    np.abs(x, out=z)
    z *= tail
    np.maximum(x, 0.0, out=x)
    x -= z
    return x


@dataclass(frozen=True)
class _Layer:
    qkv: np.ndarray  # (hidden, 3·hidden): query, key and value in one product
    qkv_bias: np.ndarray
    attention_out: np.ndarray
    attention_out_bias: np.ndarray
    attention_norm: tuple[np.ndarray, np.ndarray]
    widen: np.ndarray
    widen_bias: np.ndarray
    narrow: np.ndarray
    narrow_bias: np.ndarray
    output_norm: tuple[np.ndarray, np.ndarray]


class BertEncoder:
    """Token ids in, the last hidden state out."""

    def __init__(self, shape: BertShape, weights: Mapping[str, np.ndarray]) -> None:
        self.shape = shape
        weight = weight_reader(weights)
        self.word = weight("embeddings.word_embeddings.weight")
        self.position = weight("embeddings.position_embeddings.weight")
        self.token_type = weight("embeddings.token_type_embeddings.weight")
        self.embedding_norm = (
            weight("embeddings.LayerNorm.weight"),
            weight("embeddings.LayerNorm.bias"),
        )
        self.layers = [self._layer(weight, f"encoder.layer.{i}.") for i in range(shape.layers)]

    @staticmethod
    def _layer(weight: Any, prefix: str) -> _Layer:
        def w(name: str) -> np.ndarray:
            return weight(prefix + name)

        parts = ("query", "key", "value")
        return _Layer(
            qkv=np.concatenate([w(f"attention.self.{p}.weight") for p in parts]).T.copy(),
            qkv_bias=np.concatenate([w(f"attention.self.{p}.bias") for p in parts]),
            attention_out=w("attention.output.dense.weight").T.copy(),
            attention_out_bias=w("attention.output.dense.bias"),
            attention_norm=(
                w("attention.output.LayerNorm.weight"),
                w("attention.output.LayerNorm.bias"),
            ),
            widen=w("intermediate.dense.weight").T.copy(),
            widen_bias=w("intermediate.dense.bias"),
            narrow=w("output.dense.weight").T.copy(),
            narrow_bias=w("output.dense.bias"),
            output_norm=(w("output.LayerNorm.weight"), w("output.LayerNorm.bias")),
        )

    @property
    def max_positions(self) -> int:
        return int(self.position.shape[0])

    def hidden_states(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """(batch, tokens, hidden) for token ids (batch, tokens) and a 0/1 float32 mask."""
        batch, tokens = ids.shape
        hidden, epsilon = self.shape.hidden, self.shape.epsilon
        x = self.word[ids] + self.position[:tokens][None] + self.token_type[0]
        x = layer_norm(x, *self.embedding_norm, epsilon).reshape(batch * tokens, hidden)
        padding = (1.0 - mask) * np.float32(-1e9)  # added to the attention scores of padding
        for layer in self.layers:
            context = self._attention(layer, x, padding, batch, tokens)
            x = layer_norm(
                context @ layer.attention_out + layer.attention_out_bias + x,
                *layer.attention_norm,
                epsilon,
            )
            x = layer_norm(self._feed_forward(layer, x, tokens), *layer.output_norm, epsilon)
        return x.reshape(batch, tokens, hidden)

    def _attention(
        self, layer: _Layer, x: np.ndarray, padding: np.ndarray, batch: int, tokens: int
    ) -> np.ndarray:
        heads, hidden = self.shape.heads, self.shape.hidden
        size = hidden // heads
        scale = np.float32(1.0 / math.sqrt(size))
        qkv = (x @ layer.qkv + layer.qkv_bias).reshape(batch, tokens, 3, heads, size)
        context = np.empty((batch, tokens, hidden), dtype=np.float32)
        for row in range(batch):  # one sequence at a time: its (heads, n, n) scores fit in cache
            query = np.ascontiguousarray(qkv[row, :, 0].transpose(1, 0, 2))
            key = np.ascontiguousarray(qkv[row, :, 1].transpose(1, 2, 0))
            value = np.ascontiguousarray(qkv[row, :, 2].transpose(1, 0, 2))
            scores = query @ key
            scores *= scale
            scores += padding[row]
            scores -= scores.max(-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(-1, keepdims=True)
            context[row] = (scores @ value).transpose(1, 0, 2).reshape(tokens, hidden)
        return context.reshape(batch * tokens, hidden)

    @staticmethod
    def _feed_forward(layer: _Layer, x: np.ndarray, tokens: int) -> np.ndarray:
        out = np.empty_like(x)
        rows = max(tokens, (_FEED_FORWARD_ROWS // tokens) * tokens)
        for start in range(0, x.shape[0], rows):
            wide = x[start : start + rows] @ layer.widen
            wide += layer.widen_bias
            gelu_in_place(wide)
            out[start : start + rows] = wide @ layer.narrow
        out += layer.narrow_bias
        out += x
        return out
