"""Paths a pipeline names stay inside its folder, on the text and once symlinks are followed.

A pipeline's paths are relative to its file and may not leave its folder (docs/reference.md,
"Paths"). The text check (no absolute path, no `..`) is the semantic check R108; this module is
the other half, shared by validation, the model builder and the places that read files at run
time: a path is resolved, symlinks followed, and refused when it lands outside the folder.
Without it, a symlink placed in the folder would carry any file of the machine into a prompt. A
corpus may opt out with `follow_symlinks: true` (a document set kept elsewhere and linked in);
nothing else can. A corpus may also name a folder outside the pipeline's directly, with an
absolute or `~` path (`written_outside`): its documents then stay inside that folder.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterable
from pathlib import Path

LINK_HINT = "copy the file into the pipeline's folder: a link may only point inside it"
DOCUMENT_LINK_HINT = (
    "copy the documents into the pipeline's folder (a link may only point inside it), or, for "
    "a document set kept elsewhere, set `follow_symlinks: true` on the corpus"
)


class PathRefused(ValueError):
    """A path that cannot be used: `problem` says why in an author's words, `hint` the fix."""

    def __init__(self, path: Path, problem: str, hint: str) -> None:
        super().__init__(f"{problem}; {hint}")
        self.path = path
        self.problem = problem
        self.hint = hint


class PathOutsideFolder(PathRefused):
    """The path resolves (through a symlink) outside the pipeline's folder; `target` is where."""

    def __init__(self, path: Path, problem: str, hint: str, target: Path) -> None:
        super().__init__(path, problem, hint)
        self.target = target


class PathUnusable(PathRefused):
    """The file system refuses the path: a name too long, a loop of symlinks, …"""


def written_outside(written: str) -> bool:
    """A corpus `path` that names a folder outside the pipeline's on purpose: an absolute
    path, or one from the home folder (`~/docs/git`). Its documents then stay in that folder."""
    return written.startswith("~") or Path(written).is_absolute()


def contained(path: Path, folder: Path) -> Path:
    """`path` (absolute, or relative to `folder`) resolved with its symlinks followed.

    Raises PathOutsideFolder when the resolved path is not inside `folder` (itself resolved),
    and PathUnusable when the file system cannot resolve it."""
    return _inside(path, folder, resolved(folder))


def _inside(path: Path, folder: Path, root: Path) -> Path:
    target = resolved(path if path.is_absolute() else folder / path)
    if not target.is_relative_to(root):
        raise PathOutsideFolder(
            path,
            f"{path} is a symbolic link (or goes through one) to {shown_target(target, root)}, "
            f"outside the pipeline's folder {root}",
            LINK_HINT,
            target,
        )
    return target


def contained_documents(
    corpus: str, documents: Iterable[Path], folder: Path, *, follow_symlinks: bool
) -> None:
    """Refuse a corpus whose documents resolve outside the pipeline's `folder`, unless the
    corpus opts in with `follow_symlinks`. PathOutsideFolder names the corpus, the first such
    document and how many there are. Called by validation and wherever a corpus is read."""
    if follow_symlinks:
        return
    root = resolved(folder)
    outside: list[PathOutsideFolder] = []
    inside_parents: set[str] = set()
    for document in documents:
        # A corpus may hold 100,000 files: resolve each folder once, and a file only when it is
        # itself a link, which is all that can carry it elsewhere.
        parent = str(document.parent)
        if parent in inside_parents and not os.path.islink(document):
            continue
        try:
            _inside(document, folder, root)
        except PathOutsideFolder as error:
            outside.append(error)
            continue
        if _inside_quietly(document.parent, folder, root):
            inside_parents.add(parent)
    if outside:
        first, more = outside[0], len(outside) - 1
        others = f" (and {more} more)" if more else ""
        shown = _relative(first.path, folder)
        raise PathOutsideFolder(
            first.path,
            f"corpus `{corpus}`: the document {shown}{others} is a symbolic link to "
            f"{shown_target(first.target, folder)}, outside the pipeline's folder",
            DOCUMENT_LINK_HINT,
            first.target,
        )


def _inside_quietly(path: Path, folder: Path, root: Path) -> bool:
    try:
        _inside(path, folder, root)
    except PathRefused:
        return False
    return True


def usable(path: Path) -> Path:
    """`path` when the file system can look it up (it need not exist); else PathUnusable."""
    if "\x00" in str(path):  # pathlib answers "does not exist"; os.stat raises ValueError
        raise _holds_nul(path)
    try:
        path.exists()
    except OSError as error:
        raise _unusable(path, error) from None
    return path


def resolved(path: Path) -> Path:
    """`path` with its symlinks followed; PathUnusable when the file system cannot say."""
    if "\x00" in str(path):
        raise _holds_nul(path)
    try:
        target = path.resolve()
        target.exists()  # resolve() lets a name too long through; a lookup does not
    except OSError as error:
        raise _unusable(path, error) from None
    except RuntimeError as error:  # pathlib's "Symlink loop from …" (Python 3.11)
        raise PathUnusable(path, str(error), "fix or remove the symbolic link") from None
    return target


def shown_target(target: Path, folder: Path) -> str:
    """Where a link leads, relative to the pipeline's folder (`../notes/guide.md`): the way an
    author writes paths, and the same on every machine."""
    return os.path.relpath(target, resolved(folder))


def _relative(path: Path, folder: Path) -> Path:
    return path.relative_to(folder) if path.is_relative_to(folder) else path


def _unusable(path: Path, error: OSError) -> PathUnusable:
    reason = error.strerror or str(error)
    hint = "shorten the file name" if error.errno == errno.ENAMETOOLONG else "fix the path"
    return PathUnusable(path, f"the file system cannot use this path: {reason}", hint)


def _holds_nul(path: Path) -> PathUnusable:
    return PathUnusable(
        path, "the path holds a NUL character, which no file name can", "remove the character"
    )
