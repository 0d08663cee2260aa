"""Each page's word-piece vectors, kept beside its page vector so that reranking a search
(rerank.py) reads its candidates' pieces instead of running the model over them on every query.

`runner index` computes them in the forward pass that makes the page vectors (the model's last
hidden state, one unit-length row per word piece, special tokens left out): they cost no model
time, only room. They are stored as int8, one scale a row (a unit row's largest component over
127), which keeps every cosine the rerank takes within about 0.002 of float32's at a quarter of
the room: 384 bytes a piece, about 90 KB a page of 256 pieces.

Three files in the model's vectors folder, memory-mapped when opened (a query reads its few
candidates' rows): `tokens.npy` (int8, one row a piece, the pages' pieces one after another in
page order), `token_scales.npy` (float32, a row's scale) and `token_offsets.npy` (int64, where
each page's pieces start, and one past the last).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

TOKENS_FILE = "tokens.npy"
SCALES_FILE = "token_scales.npy"
OFFSETS_FILE = "token_offsets.npy"
FILES = (TOKENS_FILE, SCALES_FILE, OFFSETS_FILE)
_LEVELS = 127.0


def quantized(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """float32 rows as int8 rows and a scale each (rows ≈ int8 × scale)."""
    rows = np.asarray(rows, dtype=np.float32)
    scales = np.abs(rows).max(axis=1) / _LEVELS if len(rows) else np.zeros(0, np.float32)
    scales = np.where(scales > 0, scales, 1.0).astype(np.float32)
    return np.round(rows / scales[:, None]).astype(np.int8), scales


class PageTokens:
    """The word-piece vectors of an index's pages, by page row."""

    def __init__(self, tokens: np.ndarray, scales: np.ndarray, offsets: np.ndarray) -> None:
        self.tokens = tokens
        self.scales = scales
        self.offsets = offsets

    def __len__(self) -> int:
        return max(0, len(self.offsets) - 1)

    @classmethod
    def load(cls, folder: Path, pages: int) -> PageTokens | None:
        """The stored pieces of `pages` pages, memory-mapped; None when they are missing or
        do not fit together."""
        try:
            tokens, scales, offsets = (np.load(folder / name, mmap_mode="r") for name in FILES)
        except (OSError, ValueError):
            return None
        if len(offsets) != pages + 1 or len(tokens) != len(scales) or offsets[-1] != len(tokens):
            return None
        return cls(tokens, scales, offsets)

    def page(self, row: int) -> np.ndarray:
        """The float32 piece vectors of the page at `row`."""
        start, end = int(self.offsets[row]), int(self.offsets[row + 1])
        return np.asarray(self.tokens[start:end], dtype=np.float32) * self.scales[start:end, None]

    def raw(self, row: int) -> tuple[np.ndarray, np.ndarray]:
        """The page's stored rows and scales as they are (copied into a rebuilt index)."""
        start, end = int(self.offsets[row]), int(self.offsets[row + 1])
        return np.asarray(self.tokens[start:end]), np.asarray(self.scales[start:end])


def joined(parts: Sequence[tuple[np.ndarray, np.ndarray]], dimensions: int) -> PageTokens:
    """One store from each page's stored (int8 rows, scales), in page order."""
    counts = np.array([len(rows) for rows, _ in parts], dtype=np.int64)
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    if parts:
        tokens = np.concatenate([rows for rows, _ in parts]).reshape(-1, dimensions)
        scales = np.concatenate([scales for _, scales in parts]).astype(np.float32)
    else:
        tokens, scales = np.zeros((0, dimensions), np.int8), np.zeros(0, np.float32)
    return PageTokens(tokens.astype(np.int8), scales, offsets)
