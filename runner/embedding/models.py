"""The embedder a model's files make: tokenizer, BERT forward pass, pooling, unit length.

Pooling and the longest input are the model's own sentence-transformers settings
(`1_Pooling/config.json`, `sentence_bert_config.json`): mean of the tokens unless the model
pools its first token (bge), 256 word pieces for all-MiniLM-L6-v2.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

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
            import threadpoolctl  # noqa: F401  (embed() holds BLAS to one thread a batch)
            from safetensors.numpy import load as load_weights
            from tokenizers import Tokenizer
        except ImportError as error:
            raise ModelUnavailable(
                f"embeddings need numpy, safetensors, tokenizers and threadpoolctl: {INSTALL_HINT}"
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
        are batched together so that little of a batch is padding.

        One batch a core at once, each on one BLAS thread: numpy releases the GIL in its
        products, and BLAS's own threads, which fight each other and any other process for the
        cores, made a loaded machine many times slower than one thread a batch."""
        vectors = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        batches = [order[start : start + _BATCH] for start in range(0, len(order), _BATCH)]
        done = 0
        with _one_blas_thread(), ThreadPoolExecutor(_workers()) as pool:
            embedded = pool.map(lambda rows: self._batch([texts[i] for i in rows]), batches)
            for rows, batch in zip(batches, embedded, strict=True):
                vectors[rows] = batch
                done += len(rows)
                if progress is not None:
                    progress(done, len(order))
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


def _workers() -> int:
    """Batches embedded at once: one a core this process may use."""
    cores = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    return max(1, len(cores) if cores else os.cpu_count() or 1)


@contextmanager
def _one_blas_thread() -> Iterator[None]:
    """BLAS held to one thread while embedding (threadpoolctl, part of the `embed` extra)."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        yield


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
