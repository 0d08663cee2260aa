"""Each page's word-piece vectors, kept beside its page vector so that reranking a search
(rerank.py) reads its candidates' pieces instead of running the model over them on every query.

`runner index` computes them in the forward pass that makes the page vectors (the model's last
hidden state, one unit-length row per word piece, special tokens left out): they cost no model
time, only room. They are stored as int8, one scale a row (a unit row's largest component over
127), which keeps every cosine the rerank takes within about 0.002 of float32's at a quarter of
the room: 384 bytes a piece, up to 98 KB a page of 256 pieces (a tenth of a GB for a thousand
long pages). They are written to disk batch by batch as the pages are embedded, so building
them holds no more than a batch in memory.

Four files in the model's vectors folder, memory-mapped when opened (a query reads its few
candidates' rows): `tokens.npy` (int8, one row a piece, each page's pieces together),
`token_scales.npy` (float32, each row's scale), `token_starts.npy` and `token_counts.npy` (per
page, in page order, its first row and how many it has).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from runner.retrieval.mapped import mapped

TOKENS_FILE = "tokens.npy"
SCALES_FILE = "token_scales.npy"
STARTS_FILE = "token_starts.npy"
COUNTS_FILE = "token_counts.npy"
FILES = (TOKENS_FILE, SCALES_FILE, STARTS_FILE, COUNTS_FILE)
_LEVELS = 127.0


def quantized(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """float32 rows as int8 rows and a scale each (rows ≈ int8 × scale)."""
    rows = np.asarray(rows, dtype=np.float32)
    scales = np.abs(rows).max(axis=1) / _LEVELS if len(rows) else np.zeros(0, np.float32)
    scales = np.where(scales > 0, scales, 1.0).astype(np.float32)
    return np.round(rows / scales[:, None]).astype(np.int8), scales


@dataclass(frozen=True)
class QuantizedPieces:
    """Several pages' stored pieces (a query's candidates), page by page: page p's rows are
    `blocks[p] * scales[p][:, None]`. The blocks are views of the memory-mapped file, not
    copies: reranking converts each into one float32 buffer as it multiplies (rerank.py)."""

    blocks: list[np.ndarray]  # (pieces, dimensions) int8, one a page
    scales: list[np.ndarray]  # (pieces,) float32, one a page


class PageTokens:
    """The word-piece vectors of an index's pages, by page row."""

    def __init__(
        self, tokens: np.ndarray, scales: np.ndarray, starts: np.ndarray, counts: np.ndarray
    ) -> None:
        self.tokens = tokens
        self.scales = scales
        self.starts = starts
        self.counts = counts

    def __len__(self) -> int:
        return len(self.starts)

    @classmethod
    def load(cls, folder: Path, pages: int) -> PageTokens | None:
        """The stored pieces of `pages` pages, memory-mapped; None when they are missing or
        do not fit together."""
        try:
            tokens, scales, starts, counts = (mapped(folder / name) for name in FILES)
        except (OSError, ValueError):
            return None
        if len(starts) != pages or len(counts) != pages or len(tokens) != len(scales):
            return None
        if pages and int((starts + counts).max()) > len(tokens):
            return None
        return cls(tokens, scales, starts, counts)

    def raw(self, row: int) -> tuple[np.ndarray, np.ndarray]:
        """The page's stored int8 rows and their scales."""
        start = int(self.starts[row])
        end = start + int(self.counts[row])
        return self.tokens[start:end], self.scales[start:end]

    def of_pages(self, rows: Sequence[int]) -> QuantizedPieces:
        """The stored pieces of several pages (a query's candidates), still int8: a cosine
        with a row is taken on its int8 values and then scaled (rerank.py), so no float32 copy
        of the pages is made."""
        parts = [self.raw(row) for row in rows]
        return QuantizedPieces([part[0] for part in parts], [part[1] for part in parts])

    def page(self, row: int) -> np.ndarray:
        """The float32 piece vectors of the page at `row`."""
        tokens, scales = self.raw(row)
        return tokens.astype(np.float32) * scales[:, None]


class PieceWriter:
    """Pages' pieces written as they come, in any order, into `folder`'s files (each replaced
    whole by `finish`, so a search that has the old ones mapped keeps reading them)."""

    def __init__(self, folder: Path, pages: int, dimensions: int) -> None:
        self.folder = folder
        self.dimensions = dimensions
        self.starts = np.zeros(pages, dtype=np.int64)
        self.counts = np.zeros(pages, dtype=np.int64)
        self.scales: list[np.ndarray] = []
        self.rows = 0
        self._raw_path = folder / f".{TOKENS_FILE}.{os.getpid()}.raw"
        self._raw = self._raw_path.open("wb")

    def add(self, page: int, tokens: np.ndarray, scales: np.ndarray) -> None:
        """A page's int8 rows and their scales."""
        self._raw.write(np.ascontiguousarray(tokens, dtype=np.int8).tobytes())
        self.scales.append(np.asarray(scales, dtype=np.float32))
        self.starts[page], self.counts[page] = self.rows, len(tokens)
        self.rows += len(tokens)

    def add_vectors(self, page: int, vectors: np.ndarray) -> None:
        """A page's float32 piece vectors, stored as int8."""
        self.add(page, *quantized(vectors))

    def finish(self) -> None:
        self._raw.close()
        try:
            header = {"descr": "|i1", "fortran_order": False, "shape": (self.rows, self.dimensions)}
            self._write(TOKENS_FILE, lambda file: self._stream(file, header))
            scales = np.concatenate(self.scales) if self.scales else np.zeros(0, np.float32)
            self._write(SCALES_FILE, lambda file: np.save(file, scales))
            self._write(STARTS_FILE, lambda file: np.save(file, self.starts))
            self._write(COUNTS_FILE, lambda file: np.save(file, self.counts))
        finally:
            self._raw_path.unlink(missing_ok=True)

    def discard(self) -> None:
        """Stops without a trace: the files already there are left as they were."""
        self._raw.close()
        self._raw_path.unlink(missing_ok=True)

    def _stream(self, file: Any, header: dict[str, Any]) -> None:
        """tokens.npy: its header, then the rows as written, copied in chunks."""
        np.lib.format.write_array_header_2_0(file, header)
        with self._raw_path.open("rb") as raw:
            shutil.copyfileobj(raw, file, 1 << 22)

    def _write(self, name: str, write: Any) -> None:
        temporary = self.folder / f".{name}.tmp"
        with temporary.open("wb") as file:
            write(file)
        os.replace(temporary, self.folder / name)


def remove_pieces(folder: Path) -> None:
    """No pieces kept in `folder` (a corpus that does not rerank): any from before removed."""
    for name in FILES:
        (folder / name).unlink(missing_ok=True)
