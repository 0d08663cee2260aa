"""The embedder a model's files make: tokenizer, BERT forward pass, pooling, unit length.

Pooling and the longest input are the model's own sentence-transformers settings
(`1_Pooling/config.json`, `sentence_bert_config.json`): mean of the tokens unless the model
pools its first token (bge), 256 word pieces for all-MiniLM-L6-v2.

The forward pass runs on one of RUNTIMES: onnxruntime on int8 weights where onnxruntime and onnx
are installed (the `embed` extra), else runner's numpy pass; `RUNNER_EMBED_RUNTIME` picks one
(docs/retrieval.md has the speeds and the vectors' agreement).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from runner.embedding.bert import BertEncoder, BertShape, ModelFormatError
from runner.embedding.catalog import (
    INSTALL_HINT,
    ModelFiles,
    ModelUnavailable,
    canonical,
    is_remote,
    locate,
)

_BATCH = 32  # texts per forward pass
# questions whose vector and pieces an embedder keeps (~30 KB each: 4 MB at most)
ASKED_KEPT = 128
# onnx-int8: onnxruntime on int8 weights (the fastest; vectors within a cosine of ~0.99 of the
# model's), onnx: onnxruntime on the model's float32 weights (numpy's vectors), numpy: runner's
# own forward pass (needs nothing but numpy)
RUNTIMES = ("onnx-int8", "onnx", "numpy")
RUNTIME_VARIABLE = "RUNNER_EMBED_RUNTIME"
# the weights each runtime computes with: runtimes of one precision give the same vectors, so an
# index's vectors and its queries' must be of one precision, whichever runtime made them
PRECISION = {"onnx-int8": "int8", "onnx": "float32", "numpy": "float32"}

# progress(done, total): pages embedded so far
EmbedProgress = Callable[[int, int], None]


class Embedder:
    """Texts in, unit-length float32 vectors out (a dot product is their cosine)."""

    def __init__(self, name: str, files: ModelFiles, runtime: str | None = None) -> None:
        try:
            import threadpoolctl  # noqa: F401  (embed() holds BLAS to one thread a batch)
            from safetensors.numpy import load as load_weights
            from tokenizers import Tokenizer
        except ImportError as error:
            raise ModelUnavailable(
                f"embeddings need numpy, safetensors, tokenizers and threadpoolctl: {INSTALL_HINT}"
            ) from error
        self.name = name
        self.runtime = _known(runtime, repr(runtime)) if runtime else default_runtime()
        weights = LazyWeights(files, load_weights)
        self.encoder = _encoder(
            self.runtime, BertShape.from_config(files.json("config.json")), weights
        )
        pooling = files.json("1_Pooling/config.json")
        self.cls_pooling = bool(pooling.get("pooling_mode_cls_token", False))
        settings = files.json("sentence_bert_config.json")
        limit = int(settings.get("max_seq_length", 256))
        self.tokenizer = Tokenizer.from_str((files.read("tokenizer.json") or b"").decode("utf-8"))
        self.tokenizer.enable_truncation(max_length=min(limit, self.encoder.max_positions))
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # to the batch's longest
        # the last questions' vectors and pieces, by text: a round's searches and a service's
        # conversations ask the same few questions again (a forward pass is ~20 % of a search)
        self._asked: OrderedDict[str, tuple[np.ndarray, TokenVectors]] = OrderedDict()
        self._asking = threading.Lock()  # searches run on worker threads

    @property
    def dimensions(self) -> int:
        return self.encoder.shape.hidden

    @property
    def precision(self) -> str:
        """The weights its vectors are computed with (`PRECISION`): "int8" or "float32"."""
        return PRECISION[self.runtime]

    def embed(self, texts: Sequence[str], progress: EmbedProgress | None = None) -> np.ndarray:
        """(len(texts), dimensions) float32, each row of unit length; texts of similar length
        are batched together so that little of a batch is padding.

        One batch a core at once, each on one thread (one BLAS thread for numpy, one
        onnxruntime thread): both release the GIL while they compute, and their own thread
        pools, which fight each other and any other process for the cores, made a loaded
        machine slower than one thread a batch."""
        return self._embed(texts, progress, None)

    def embed_pages(
        self,
        texts: Sequence[str],
        keep: Callable[[int, np.ndarray], None],
        progress: EmbedProgress | None = None,
    ) -> np.ndarray:
        """`embed`'s vectors; and each text's word pieces (the unit-length vector of each, as
        `token_vectors` gives them, from the same forward pass) handed to `keep(text's index,
        pieces)` as each batch is done: an index keeps them so that reranking a search reads
        its candidates' pieces instead of running the model again."""
        return self._embed(texts, progress, keep)

    def _embed(
        self,
        texts: Sequence[str],
        progress: EmbedProgress | None,
        keep: Callable[[int, np.ndarray], None] | None,
    ) -> np.ndarray:
        vectors = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        batches = [order[start : start + _BATCH] for start in range(0, len(order), _BATCH)]
        done = 0
        tokens = keep is not None
        with self._batch_pool(len(batches)) as pool:
            embedded = pool.map(lambda rows: self._batch([texts[i] for i in rows], tokens), batches)
            for rows, (batch, pieces) in zip(batches, embedded, strict=True):
                vectors[rows] = batch
                if keep is not None:
                    for row, found in zip(rows, pieces, strict=True):
                        keep(row, found)
                done += len(rows)
                if progress is not None:
                    progress(done, len(order))
        return vectors

    def question(self, text: str) -> tuple[np.ndarray, TokenVectors]:
        """A search's question: its vector and its word pieces, from one forward pass run on
        this thread (a pool's threads cost more than one short text takes); the last
        `ASKED_KEPT` questions' are kept (read-only: callers share them)."""
        with self._asking:
            kept = self._asked.get(text)
            if kept is not None:
                self._asked.move_to_end(text)
                return kept
        one_thread = _one_blas_thread() if self.runtime == "numpy" else nullcontext()
        with one_thread:
            encoded, states, mask = self._forward([text])
        [pieces] = self._token_rows([text], encoded, states)
        found = self._pooled(states, mask)[0], pieces
        with self._asking:
            self._asked[text] = found
            while len(self._asked) > ASKED_KEPT:
                self._asked.popitem(last=False)
        return found

    def token_vectors(self, texts: Sequence[str]) -> list[TokenVectors]:
        """Per text, the model's unit-length vector of each of its word pieces (the special
        tokens left out) and the word each piece is of: what a late-interaction match of two
        texts compares (runner/retrieval/rerank.py). The texts are a search's few: split in one
        batch a core, each on one thread, as `embed` does."""
        texts = list(texts)
        size = -(-len(texts) // _workers()) or 1
        batches = [texts[start : start + size] for start in range(0, len(texts), size)]
        with self._batch_pool(len(batches)) as pool:
            return [found for batch in pool.map(self._token_batch, batches) for found in batch]

    @contextmanager
    def _batch_pool(self, batches: int) -> Iterator[ThreadPoolExecutor]:
        """Workers for the batches, one a core at most, each computing on one thread."""
        one_thread = _one_blas_thread() if self.runtime == "numpy" else nullcontext()
        with one_thread, ThreadPoolExecutor(max(1, min(batches, _workers()))) as pool:
            yield pool

    def _token_batch(self, texts: list[str]) -> list[TokenVectors]:
        encoded, states, _ = self._forward(texts)
        return self._token_rows(texts, encoded, states)

    def _token_rows(
        self, texts: list[str], encoded: list[Any], states: np.ndarray
    ) -> list[TokenVectors]:
        found = []
        for text, item, state in zip(texts, encoded, states, strict=True):
            pieces = _pieces(item)
            found.append(TokenVectors(_unit_rows(state[pieces]), _piece_words(text, item, pieces)))
        return found

    def _forward(self, texts: list[str]) -> tuple[list[Any], np.ndarray, np.ndarray]:
        """The texts' encodings, the model's last hidden states and the attention mask."""
        encoded = self.tokenizer.encode_batch(texts)
        ids = np.array([item.ids for item in encoded], dtype=np.int64)
        mask = np.array([item.attention_mask for item in encoded], dtype=np.float32)
        return encoded, self.encoder.hidden_states(ids, mask), mask

    def _batch(self, texts: list[str], tokens: bool = False) -> tuple[np.ndarray, list[np.ndarray]]:
        """The texts' vectors, and (with `tokens`) each one's unit-length piece vectors."""
        encoded, states, mask = self._forward(texts)
        pieces = (
            [_unit_rows(state[_pieces(item)]) for item, state in zip(encoded, states, strict=True)]
            if tokens
            else []
        )
        return self._pooled(states, mask), pieces

    def _pooled(self, states: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """The texts' unit-length vectors from their hidden states: the model's pooling."""
        if self.cls_pooling:
            pooled = states[:, 0]
        else:
            pooled = (states * mask[:, :, None]).sum(1) / np.clip(
                mask.sum(1, keepdims=True), 1e-9, None
            )
        return _unit_rows(pooled)


def _pieces(encoding: Any) -> list[int]:
    """The rows of a text's word pieces: its special tokens (and padding) left out."""
    return [row for row, special in enumerate(encoding.special_tokens_mask) if not special]


def _unit_rows(rows: np.ndarray) -> np.ndarray:
    return rows / np.clip(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12, None)


@dataclass(frozen=True)
class TokenVectors:
    """A text's word pieces as the model sees them in context: one unit-length row each, and
    the word (as written in the text) each piece belongs to."""

    vectors: np.ndarray  # (pieces, dimensions) float32
    words: list[str]


def _piece_words(text: str, encoding: Any, pieces: Sequence[int]) -> list[str]:
    """The word of each piece: the text between the first and last offset of the pieces
    the tokenizer's pre-tokenizer counted as one word (`myapp.users` is three: `myapp`, `.`,
    `users`)."""
    spans: dict[int, tuple[int, int]] = {}
    for row in pieces:
        word = encoding.word_ids[row]
        start, end = encoding.offsets[row]
        first, last = spans.get(word, (start, end))
        spans[word] = (min(first, start), max(last, end))
    return [text[slice(*spans[encoding.word_ids[row]])] for row in pieces]


class Encoder(Protocol):
    """A BERT forward pass: `BertEncoder` (numpy) or `OnnxEncoder` (onnxruntime)."""

    shape: BertShape

    @property
    def max_positions(self) -> int: ...

    def hidden_states(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray: ...


@functools.cache  # asked whenever a question is embedded; an install does not come and go
def onnx_installed() -> bool:
    return all(importlib.util.find_spec(name) is not None for name in ("onnxruntime", "onnx"))


def default_runtime() -> str:
    """`RUNNER_EMBED_RUNTIME` when set, else onnxruntime on int8 weights where it is
    installed, else numpy."""
    chosen = os.environ.get(RUNTIME_VARIABLE, "")
    if chosen:
        return _known(chosen, f"{RUNTIME_VARIABLE}={chosen!r}")
    return RUNTIMES[0] if onnx_installed() else "numpy"


def runtime_for(precision: str) -> str:
    """The runtime to embed queries with for vectors of `precision`: the default runtime when
    it computes with those weights, else one that does and can run here; the default when none
    can (int8 vectors with onnxruntime gone: float32 queries, within a cosine of ~0.99)."""
    default = default_runtime()
    if PRECISION[default] == precision:
        return default
    for runtime in RUNTIMES:
        if PRECISION[runtime] == precision and (runtime == "numpy" or onnx_installed()):
            return runtime
    return default


def _known(runtime: str, named: str) -> str:
    if runtime not in RUNTIMES:
        raise ModelUnavailable(
            f"{named}: no such embedding runtime; choose one of {', '.join(RUNTIMES)}"
        )
    return runtime


class LazyWeights:
    """A model's weights, read only when something needs them: the numpy pass, or a first
    build of the ONNX graph. A process that finds its graph built (onnx_runtime.py) never reads
    them, which saves about a second and 180 MB a process."""

    FILE = "model.safetensors"

    def __init__(self, files: ModelFiles, load: Callable[[bytes], dict[str, np.ndarray]]) -> None:
        self.files = files
        self._load = load
        self._raw: bytes | None = None

    @functools.cached_property
    def identity(self) -> str:
        """Tells this version of the weights from another without reading them."""
        return self.files.identity(self.FILE)

    def _bytes(self) -> bytes:
        if self._raw is None:
            self._raw = self.files.read(self.FILE) or b""
        return self._raw

    @functools.cached_property
    def digest(self) -> str:
        return hashlib.sha256(self._bytes()).hexdigest()

    @functools.cached_property
    def arrays(self) -> Mapping[str, np.ndarray]:
        return self._load(self._bytes())

    def forget(self) -> None:
        """Drops the bytes and arrays read: the ONNX session holds its own copy."""
        self._raw = None
        self.__dict__.pop("arrays", None)


def _encoder(runtime: str, shape: BertShape, weights: LazyWeights) -> Encoder:
    if runtime == "numpy":
        return BertEncoder(shape, weights.arrays)
    if not onnx_installed():
        raise ModelUnavailable(
            f"the embedding runtime {runtime!r} needs onnxruntime and onnx: {INSTALL_HINT}"
        )
    from runner.embedding.onnx_runtime import OnnxEncoder

    variant = "int8" if runtime == "onnx-int8" else "fp32"
    return OnnxEncoder(shape, weights, variant)


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


_LOADED: dict[tuple[str, str], Embedder] = {}
_LOADING = threading.Lock()  # searches run in worker threads: a model is loaded once


def load_embedder(name: str, runtime: str | None = None) -> Embedder:
    """The embedder of a model on a runtime (the default one when None), loaded once per
    process (its weights are read once); a service's (`remote.py`) when it names one."""
    if is_remote(name):
        from runner.embedding.services import load_remote

        return load_remote(name)  # type: ignore[return-value]  # an Embedder's protocols
    name = canonical(name)
    runtime = runtime or default_runtime()
    with _LOADING:
        if (name, runtime) not in _LOADED:
            try:
                _LOADED[(name, runtime)] = Embedder(name, locate(name), runtime)
            except ModelFormatError as error:
                raise ModelUnavailable(f"embedding model {name!r}: {error}") from None
        return _LOADED[(name, runtime)]
