"""A pipeline packed to travel to the machines of a Ray cluster: its folder (templates, tables,
corpora, and the corpora's indexes under `.runner/`, so no node builds them again) and the
files the evaluation names (an LLM script, a cassette, a judge's script), as one archive that
the cluster's object store carries once to each node.

Links are followed (a corpus may be a link to documents kept elsewhere); the runs, the sessions
and the response cache under `.runner/` stay home.
"""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

from runner.eval.setup import EvalSpec

PIPELINE_FOLDER = "pipeline"
FILES_FOLDER = "files"
_LEFT_HOME = ("eval", "cache", "llm-cache")  # under .runner/
_SPEC_FILES = ("llm_script", "replay", "judge_script")


def _kept(member: tarfile.TarInfo) -> tarfile.TarInfo | None:
    parts = Path(member.name).parts
    if ".runner" in parts:
        inside = parts[parts.index(".runner") + 1 :]
        if inside and (inside[0] in _LEFT_HOME or inside[0].startswith("state.sqlite")):
            return None
    if parts and parts[-1].endswith((".sqlite-wal", ".sqlite-shm")):
        return None
    return member


def pack(spec: EvalSpec) -> bytes:
    """The archive of the pipeline's folder and of the spec's files."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", dereference=True, compresslevel=1) as archive:
        archive.add(spec.pipeline.resolve().parent, arcname=PIPELINE_FOLDER, filter=_kept)
        for name in _SPEC_FILES:
            path = getattr(spec, name)
            if path is not None:
                archive.add(Path(path).resolve(), arcname=f"{FILES_FOLDER}/{name}")
    return buffer.getvalue()


def _check_members(archive: tarfile.TarFile, folder: Path) -> None:
    root = folder.resolve()
    for member in archive.getmembers():
        target = (root / member.name).resolve()
        if not target.is_relative_to(root) or member.issym() or member.islnk():
            raise ValueError(f"refused an archive member outside {folder}: {member.name}")


def unpack(data: bytes, folder: Path, spec: EvalSpec) -> EvalSpec:
    """The archive written out in `folder`, and the spec pointing at the copies."""
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
        try:
            archive.extractall(folder, filter="data")  # no link or path out of `folder`
        except TypeError:  # a Python before 3.10.12 / 3.11.4: our own archive, checked here
            _check_members(archive, folder)
            archive.extractall(folder)
    moved = {
        name: folder / FILES_FOLDER / name
        for name in _SPEC_FILES
        if getattr(spec, name) is not None
    }
    return spec.moved(folder / PIPELINE_FOLDER / spec.pipeline.name, **moved)
