"""Validate a pipeline once per change of its files: what `load_pipeline` remembers.

Validating a pipeline (the JSON Schema, the semantic checks, listing each corpus) costs a
`runner run` more than its round: jsonschema, Jinja's parser and the regex module are imported
for it, and a corpus folder is globbed. A pipeline that passed with no diagnostic at all leaves
a record in its state folder (`<state>/validated/<name>-<digest of its path>.json`) of what the
checks read:

- the runner that checked it: its version and the digest of the pipeline schema and of the
  checks' own source files (size and mtime), so that another runner validates again;
- the pipeline file's contents (sha256);
- every path the checks named (`Checks.named`): a file by its contents (sha256), a missing
  path as missing, a folder by the stat data of every folder below it (mtime_ns, inode, size,
  links: a file added, removed or renamed changes its folder's mtime), and, for a folder whose
  files' contents a check reads (anything but a corpus, whose documents validation only lists),
  the stat data of its files too.

`load_pipeline` builds the model straight from the YAML when the record still holds, and
validates in full when anything differs, when the record is missing or unreadable, or when a
folder's stat data is too recent to be trusted (RACY_SECONDS: a timestamp is coarser than the
time between two writes). `runner validate` never reads the record: it always checks.
A failure to read or write the record is never an error: it only costs a full validation.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import runner
from runner.resources import schema_path

if TYPE_CHECKING:
    from runner.config.model import Pipeline

RECORD_FORMAT = 1
# a folder modified this recently may change again within its timestamp's granularity unseen
RACY_SECONDS = 2.0
MAX_FOLDERS = 2_000  # beyond this many folders below a named one, nothing is remembered
Fingerprint = list[Any]


def state_folder(path: Path, data: object) -> Path:
    """Where a pipeline keeps its state, read from its data as the model builder does (the
    data may not be valid: then the default place)."""
    folder = path.resolve().parent
    state_dir = data.get("state_dir") if isinstance(data, Mapping) else None
    return folder / state_dir if isinstance(state_dir, str) else folder / ".runner"


def record_path(pipeline: Path, state: Path) -> Path:
    resolved = pipeline.resolve()
    digest = hashlib.sha256(str(resolved).encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return state / "validated" / f"{resolved.stem}-{digest}.json"


def runner_key() -> str:
    """The runner that checks: its version, the pipeline schema, the checks' source files."""
    digest = hashlib.sha256(runner.__version__.encode())
    digest.update(schema_path("pipeline").read_bytes())
    config = Path(__file__).resolve().parent
    for source in sorted([*config.glob("*.py"), *config.glob("checks/*.py")]):
        status = source.stat()
        digest.update(f"{source.name}:{status.st_size}:{status.st_mtime_ns}".encode())
    return digest.hexdigest()


def still_valid(pipeline: Path, text: str, data: object) -> bool:
    """Whether the record says this pipeline, with these contents, passed with no diagnostic
    and nothing it names has changed since (the folders are stat-ed, not listed again)."""
    try:
        record = json.loads(
            record_path(pipeline, state_folder(pipeline, data)).read_text(encoding="utf-8")
        )
        if record.get("format") != RECORD_FORMAT or record.get("runner") != runner_key():
            return False
        if record.get("sha256") != _text_digest(text):
            return False
        return all(unchanged(Path(named), stored) for named, _, stored in record["named"])
    except (OSError, ValueError, KeyError, TypeError):
        return False


def unchanged(path: Path, stored: Fingerprint) -> bool:
    """Whether the path still has the fingerprint `stored`, without listing a folder again: a
    folder's entries cannot change without its mtime changing."""
    kind = stored[0]
    if kind == "missing":
        return not os.path.lexists(path)
    if kind == "file":
        return path.is_file() and _file_digest(path) == stored[1]
    if kind != "folder" or not path.is_dir():
        return False
    _, folders, files = stored
    try:
        return all(
            _stat_data(os.stat(path / relative)) == data for relative, *data in folders
        ) and all(
            _stat_data(os.stat(path / relative / name)) == data for relative, name, *data in files
        )
    except OSError:
        return False


def remember(pipeline: Path, model: Pipeline, named: Mapping[Path, bool]) -> None:
    """Record that the pipeline (its file, its model) passed with no diagnostic, with what its
    checks named; nothing when a named path is too recent to be trusted or too large."""
    try:
        prints = [
            [str(path), contents, fingerprint(path, contents)] for path, contents in named.items()
        ]
        if any(stored is None for _, _, stored in prints):
            return
        record = {
            "format": RECORD_FORMAT,
            "runner": runner_key(),
            "sha256": model.content_hash,
            "named": prints,
        }
        target = record_path(pipeline, model.state_folder)
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        temporary.write_text(json.dumps(record), encoding="utf-8")
        os.replace(temporary, target)
    except OSError:
        return


def fingerprint(path: Path, contents: bool) -> Fingerprint | None:
    """What a check could see of a path: a file's contents, a folder's tree of stat data (and
    its files' when `contents`); None when it cannot be trusted (too recent, too large)."""
    try:
        status = path.stat()
    except OSError:
        return ["missing"] if not os.path.lexists(path) else None
    if not path.is_dir():
        return ["file", _file_digest(path)]
    folders: list[list[Any]] = []
    files: list[list[Any]] = []
    now = time.time_ns()
    for here, names, found in os.walk(path, followlinks=True):
        names.sort()
        here_status = status if here == str(path) else os.stat(here)
        if _racy(here_status, now) or len(folders) >= MAX_FOLDERS:
            return None
        relative = os.path.relpath(here, path)
        folders.append([relative, *_stat_data(here_status)])
        for name in sorted(found) if contents else ():
            file_status = os.stat(os.path.join(here, name))
            if _racy(file_status, now):
                return None
            files.append([relative, name, *_stat_data(file_status)])
    return ["folder", folders, files]


def _racy(status: os.stat_result, now: int) -> bool:
    return now - status.st_mtime_ns < RACY_SECONDS * 1e9


def _stat_data(status: os.stat_result) -> list[int]:
    return [status.st_mtime_ns, status.st_ino, status.st_size, status.st_nlink]


def _file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _text_digest(text: str) -> str:
    """As the model's `content_hash` (config/build.py)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
