"""A stored array (`.npy`) opened memory-mapped, as a plain array over the mapping.

numpy.memmap is an ndarray subclass: every slice and product of one builds another memmap
(its `__array_finalize__` and `__getitem__` run in Python), which cost a third of reading a
query's candidates. A plain array over the same mapping reads the same pages on demand, keeps
the mapping open as its base, and slices at C speed. A file replaced on disk (`os.replace`)
leaves an open mapping reading the old one.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np


def mapped(path: Path) -> np.ndarray:
    """The array stored at `path`, memory-mapped read-only. Raises OSError or ValueError."""
    return np.asarray(np.load(path, mmap_mode="r"))
