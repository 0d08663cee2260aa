"""Paths a pipeline names: relative to its file and inside its folder on the text (R108) and
once symlinks are followed (R124, runner/config/paths.py), usable by the file system (R125),
existing (R107) and of the right type, file or folder (R123)."""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

from runner.config.checks.context import Checks
from runner.config.humanize import suggestion_suffix
from runner.config.paths import (
    PathOutsideFolder,
    PathUnusable,
    contained,
    shown_target,
    usable,
)
from runner.documents.diagnostics import KeyPath
from runner.documents.loader import LoadError, YamlFile, read_document

SHOWN = 60  # characters of a path echoed in a message


def inside_folder(checks: Checks, relative: str, path: KeyPath) -> Path | None:
    """The path if its text stays inside the pipeline's folder and the file system can use
    it, else a diagnostic and None."""
    pure = PurePosixPath(relative.replace("\\", "/"))
    if pure.is_absolute() or re.match(r"^[A-Za-z]:", relative) or ".." in pure.parts:
        checks.emit(
            "R108",
            f"the path {shown(relative)} leaves the pipeline's folder",
            path,
            hint="paths are relative to the pipeline file and must stay in its folder: "
            "move the file there",
        )
        return None
    target = checks.folder / relative
    try:
        usable(target)
    except PathUnusable as error:
        unusable(checks, relative, path, error)
        return None
    checks.note_path(target)  # the validation record fingerprints it (config/validated.py)
    return target


def existing_document(checks: Checks, relative: str, path: KeyPath) -> YamlFile | None:
    """The YAML document of an existing file inside the pipeline's folder (a script, a
    synonyms file), or a diagnostic (the path's, or the file's own, placed in it) and None."""
    target = existing_path(checks, relative, path)
    if target is None:
        return None
    try:
        return read_document(target)
    except LoadError as error:
        checks.diagnostics.append(error.diagnostic)
        return None


def existing_path(
    checks: Checks,
    relative: str,
    path: KeyPath,
    *,
    folder: bool = False,
    follow_symlinks: bool = False,
) -> Path | None:
    """The path if it names an existing file (or folder) inside the pipeline's folder, with
    its symlinks followed (unless `follow_symlinks`, a corpus's opt-in), else a diagnostic."""
    target = inside_folder(checks, relative, path)
    if target is None:
        return None
    try:
        real = target if follow_symlinks else contained(target, checks.folder)
    except PathOutsideFolder as error:
        checks.emit(
            "R124",
            f"{shown(relative)} is a symbolic link (or goes through one) to "
            f"{shown_target(error.target, checks.folder)}, outside the pipeline's folder",
            path,
            hint=error.hint
            + ("; a corpus may set `follow_symlinks: true` to allow it" if folder else ""),
        )
        return None
    except PathUnusable as error:
        unusable(checks, relative, path, error)
        return None
    if not real.exists():
        what = "folder" if folder else "file"
        nearby = _nearby_names(target)
        checks.emit(
            "R107",
            f"{what} not found: {shown(relative)}" + suggestion_suffix(target.name, nearby),
            path,
            hint=f"paths are relative to the pipeline file ({checks.folder})",
        )
        return None
    if real.is_dir() != folder:
        expected = "a folder" if folder else "a file"
        checks.emit("R123", f"{shown(relative)} is not {expected}", path)
        return None
    return target


def unusable(checks: Checks, relative: str, path: KeyPath, error: PathUnusable) -> None:
    checks.emit("R125", f"{shown(relative)}: {error.problem}", path, hint=error.hint)


def shown(relative: str) -> str:
    """A path as a message quotes it: whole when short, its start and end when not."""
    if len(relative) <= SHOWN:
        return f"`{relative}`"
    return f"`{relative[: SHOWN // 2]}…{relative[-SHOWN // 2 :]}` ({len(relative)} characters)"


def _nearby_names(target: Path) -> list[str]:
    try:
        return [entry.name for entry in target.parent.iterdir()]
    except OSError:
        return []
