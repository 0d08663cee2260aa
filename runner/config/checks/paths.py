"""Paths a pipeline names: relative to its file, inside its folder (R108), existing (R107) and
of the right type, file or folder (R123)."""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

from runner.config.checks.context import Checks
from runner.config.diagnostics import KeyPath
from runner.config.humanize import suggestion_suffix


def inside_folder(checks: Checks, relative: str, path: KeyPath) -> Path | None:
    """The path if it stays inside the pipeline's folder (checked on the text, so that a
    symlink placed in the folder on purpose is allowed), else a diagnostic and None."""
    pure = PurePosixPath(relative.replace("\\", "/"))
    if pure.is_absolute() or re.match(r"^[A-Za-z]:", relative) or ".." in pure.parts:
        checks.emit(
            "R108",
            f"the path `{relative}` leaves the pipeline's folder",
            path,
            hint="paths are relative to the pipeline file and must stay in its folder: "
            "move the file there",
        )
        return None
    return checks.folder / relative


def existing_path(
    checks: Checks, relative: str, path: KeyPath, *, folder: bool = False
) -> Path | None:
    target = inside_folder(checks, relative, path)
    if target is None:
        return None
    if not target.exists():
        what = "folder" if folder else "file"
        nearby = _nearby_names(target)
        checks.emit(
            "R107",
            f"{what} not found: `{relative}`" + suggestion_suffix(target.name, nearby),
            path,
            hint=f"paths are relative to the pipeline file ({checks.folder})",
        )
        return None
    if target.is_dir() != folder:
        expected = "a folder" if folder else "a file"
        checks.emit("R123", f"`{relative}` is not {expected}", path)
        return None
    return target


def _nearby_names(target: Path) -> list[str]:
    try:
        return [entry.name for entry in target.parent.iterdir()]
    except OSError:
        return []
