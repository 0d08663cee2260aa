"""The embedder a model's files make: tokenizer, BERT forward pass, pooling, unit length.

Pooling and the longest input are the model's own sentence-transformers settings
(`1_Pooling/config.json`, `sentence_bert_config.json`): mean of the tokens unless the model
pools its first token (bge), 256 word pieces for all-MiniLM-L6-v2.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from runner.embedding.bert import BertEncoder, BertShape, ModelFormatError
from runner.embedding.catalog import INSTALL_HINT, ModelFiles, ModelUnavailable, canonical, locate

_BATCH = 32  # texts per forward pass

# progress(done, total): pages embedded so far
EmbedProgress = Callable[[int, int], None]


class Embedder:
    """Texts in, unit-length float32 vectors out (a dot product is their cosine)."""

    def __init__(self, name: str, files: ModelFiles) -> None:
        try:
            from safetensors.numpy import load as load_weights
            from tokenizers import Tokenizer
        except ImportError as error:
            raise ModelUnavailable(
                f"embeddings need numpy, safetensors and tokenizers: {INSTALL_HINT}"
            ) from error
        self.name = name
        self.encoder = BertEncoder(
            BertShape.from_config(files.json("config.json")),
            load_weights(files.read("model.safetensors") or b""),
        )
        pooling = files.json("1_Pooling/config.json")
        self.cls_pooling = bool(pooling.get("pooling_mode_cls_token", False))
        settings = files.json("sentence_bert_config.json")
        limit = int(settings.get("max_seq_length", 256))
        self.tokenizer = Tokenizer.from_str((files.read("tokenizer.json") or b"").decode("utf-8"))
        self.tokenizer.enable_truncation(max_length=min(limit, self.encoder.max_positions))
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # to the batch's longest

    @property
    def dimensions(self) -> int:
        return self.encoder.shape.hidden

    def embed(self, texts: Sequence[str], progress: EmbedProgress | None = None) -> np.ndarray:
        """(len(texts), dimensions) float32, each row of unit length; texts of similar length
        are batched together so that little of a batch is padding."""
        vectors = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), _BATCH):
            rows = order[start : start + _BATCH]
            vectors[rows] = self._batch([texts[i] for i in rows])
            if progress is not None:
                progress(min(start + _BATCH, len(order)), len(order))
        return vectors

    def _batch(self, texts: list[str]) -> np.ndarray:
        encoded = self.tokenizer.encode_batch(texts)
        ids = np.array([item.ids for item in encoded], dtype=np.int64)
        mask = np.array([item.attention_mask for item in encoded], dtype=np.float32)
        states = self.encoder.hidden_states(ids, mask)
        if self.cls_pooling:
            pooled = states[:, 0]
        else:
            pooled = (states * mask[:, :, None]).sum(1) / np.clip(
                mask.sum(1, keepdims=True), 1e-9, None
            )
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return pooled / np.clip(norms, 1e-12, None)


_LOADED: dict[str, Embedder] = {}


def load_embedder(name: str) -> Embedder:
    """The embedder of a model, loaded once per process (its weights are read once)."""
    name = canonical(name)
    if name not in _LOADED:
        try:
            _LOADED[name] = Embedder(name, locate(name))
        except ModelFormatError as error:
            raise ModelUnavailable(f"embedding model {name!r}: {error}") from None
    return _LOADED[name]
