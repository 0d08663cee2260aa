"""Sentence embeddings on the CPU: a packaged model (nothing downloaded at run time) or a model
folder, run by runner's own BERT forward pass, on onnxruntime from an ONNX graph built from the
weights or in numpy (the `embed` extra: numpy, safetensors, tokenizers, onnxruntime, onnx).
Importing this package imports none of them (validation reads the catalog);
`runner.embedding.models.load_embedder` loads a model."""

from __future__ import annotations

from runner.embedding.catalog import (
    DEFAULT_MODEL,
    INSTALL_HINT,
    REQUIRED_FILES,
    ModelUnavailable,
    canonical,
    is_packaged,
)

__all__ = [
    "DEFAULT_MODEL",
    "INSTALL_HINT",
    "REQUIRED_FILES",
    "ModelUnavailable",
    "canonical",
    "is_packaged",
]
