"""Which files a corpus holds: its documents are the files of a format runner reads that an
`include` glob matches and no `exclude` glob does, hidden files and folders left out.

Validation (R122), the index's staleness check and `runner explain` all list a corpus with
`corpus_entries`, so they agree on what "the corpus's documents" are. How each format is read is
the retrieval layer's business (runner.retrieval.readers); which file is of which format is
decided here, from its name.
"""

from __future__ import annotations

import glob
import os
import re
import stat
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path, PurePosixPath

FORMATS = {
    ".md": "markdown",
    ".markdown": "markdown",
    ".rst": "rst",
    ".txt": "text",
    ".html": "html",
    ".htm": "html",
    ".xhtml": "html",
    ".pdf": "pdf",
}
# Every file below the folder; `corpus_entries` keeps those of a format runner reads. One walk of
# the folder, where a pattern per format would walk it once for each. (The schema's default of
# `include`, which the model's `Corpus.include` is checked against: tests/config.)
DEFAULT_INCLUDE = ("**/*",)


def document_format(path: str) -> str | None:
    """The format a file is read as, or None for a file that is not a corpus document.

    `.rst.txt` (how Sphinx ships its sources, like the pydocs corpus) counts as reStructuredText.
    """
    lower = path.lower()
    if lower.endswith(".rst.txt"):
        return "rst"
    return FORMATS.get(os.path.splitext(lower)[1])


def corpus_entries(
    folder: Path, include: Sequence[str], exclude: Sequence[str] = ()
) -> list[tuple[str, os.stat_result]]:
    """(relative posix path, stat) of every corpus document, sorted by path. String globbing
    (`glob.glob` with `root_dir`, which skips hidden names) and one stat a file: opening an
    index of 6,000 files checks them in a few dozen milliseconds, where pathlib took ten times
    that."""
    root = str(folder)
    found: dict[str, os.stat_result] = {}
    for pattern in include:
        for relative in glob.glob(folder_glob(pattern), root_dir=root, recursive=True):
            relative = relative.replace(os.sep, "/")
            if relative in found or document_format(relative.rsplit("/", 1)[-1]) is None:
                continue
            if exclude and excluded(relative, exclude):
                continue
            try:
                status = os.stat(os.path.join(root, relative))
            except OSError:
                continue
            if stat.S_ISREG(status.st_mode):
                found[relative] = status
    return sorted(found.items())


def folder_glob(pattern: str) -> str:
    """A glob with forward slashes; one that ends with `/` names a folder: everything below it."""
    pattern = pattern.replace("\\", "/")
    return pattern + "**" if pattern.endswith("/") else pattern


def excluded(relative: str | PurePosixPath | Path, exclude: Sequence[str]) -> bool:
    """Whether a path relative to the corpus folder matches an `exclude` glob, with the meaning
    `include` globs have: anchored at the folder, `*` within one name, `**` any number of
    folders (`drafts/**` is everything below drafts/, `**/toc.html` a toc.html anywhere); a
    glob that ends with `/` names a folder, and means everything below it."""
    posix = relative if isinstance(relative, str) else PurePosixPath(relative).as_posix()
    return any(_glob_regex(pattern).match(posix) for pattern in exclude)


@lru_cache(maxsize=256)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    parts = [part for part in folder_glob(pattern).split("/") if part not in ("", ".")]
    regex = ""
    for number, part in enumerate(parts):
        last = number == len(parts) - 1
        if part == "**":
            regex += ".*" if last else "(?:[^/]+/)*"
        else:
            regex += _name_regex(part) + ("" if last else "/")
    return re.compile(regex + r"\Z")


def _name_regex(part: str) -> str:
    """One path component's glob (`*`, `?`, `[abc]`, `[!abc]`) as a regex that stays in it."""
    regex, i = "", 0
    while i < len(part):
        ch = part[i]
        close = part.find("]", i + 2) if ch == "[" else -1
        if ch == "*":
            regex += "[^/]*"
        elif ch == "?":
            regex += "[^/]"
        elif close != -1:
            inside = part[i + 1 : close]
            negated = inside.startswith("!")
            body = re.escape(inside[1:] if negated else inside).replace("\\-", "-")
            regex += f"[{'^/' if negated else ''}{body}]"
            i = close
        else:
            regex += re.escape(ch)
        i += 1
    return regex
