"""Whether the files an index was built from have changed: what every persisted index asks.

An index records the files it was built from (relative path -> [size, mtime_ns]) and the sha256
of their contents. Opening it compares sizes and mtimes first (a stat per file); only when they
differ does the content hash decide, so a `touch` or a fresh checkout rebuilds nothing: the index
then records the new sizes and mtimes, for the next fast check.
"""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any


class Change(enum.Enum):
    NONE = "unchanged"
    TOUCHED = "same content, new sizes or mtimes"  # record the new ones
    CONTENT = "changed"


def content_sha256(folder: Path, relatives: Iterable[str]) -> str:
    """The sha256 of files' names (relative to `folder`) and contents, in the order given."""
    digest = hashlib.sha256()
    for relative in relatives:
        digest.update(relative.encode("utf-8") + b"\0")
        digest.update((folder / relative).read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()


def file_change(
    recorded: dict[str, Any], files: dict[str, list[int]], content: Callable[[], str]
) -> Change:
    """How the files now (`files`, and `content()` for their hash, computed only when needed)
    differ from what an index `recorded` (its `files` and `content_sha256`)."""
    if recorded.get("files") == files:
        return Change.NONE
    if recorded.get("content_sha256") != content():
        return Change.CONTENT
    return Change.TOUCHED
