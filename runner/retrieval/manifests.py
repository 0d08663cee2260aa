"""An index's manifest: what it was built from (the corpus's page settings, its files by stat and
content), whether the index is up to date, and the stat data that proves a corpus unchanged
without listing its folder (runner/retrieval/index.py opens and builds; this says when)."""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from runner.config.corpus_files import corpus_entries
from runner.documents.fingerprints import Change, content_sha256, file_change
from runner.retrieval.keyword import is_complete as keyword_complete
from runner.retrieval.store import PAGES_FILE

if TYPE_CHECKING:
    from runner.config.model import Corpus

MANIFEST_FILE = "manifest.json"
# a folder or file changed this recently may change again within its timestamp's granularity
RACY_SECONDS = 2.0
MANIFEST_FORMAT = 12  # 2: readers, paths, navigation; 3: page store, mmap BM25; 4: headings;
# 5: PDF headings from the outline; 6: a declared title over a numbered first heading;
# 7: HTML furniture and permalinks dropped, every heading of a page kept (`headings`); 8: BM25
# stored as flat arrays runner searches itself (keyword.py), the page store's counts stored;
# 9: a table cut across pages repeats its header row on each; 10: the section's names embedded
# for the rerank, a pod2html page's <title>; 11: admonitions stay in their section; 12: an HTML
# definition list's term labels the first line of its definition


@dataclass(frozen=True)
class Snapshot:
    """What an index is built from: the corpus settings and its files."""

    settings: dict[str, Any]
    files: dict[str, list[int]]  # relative path -> [size, mtime_ns]
    relatives: list[str] = field(default_factory=list)  # the files, relative, sorted

    def paths(self, folder: Path) -> list[Path]:
        return [folder / relative for relative in self.relatives]

    def content_sha256(self, folder: Path) -> str:
        return content_sha256(folder, self.relatives)


def snapshot(corpus: Corpus, source: Path) -> Snapshot:
    entries = corpus_entries(source, corpus.include, corpus.exclude)
    files = {relative: _file_stat(status) for relative, status in entries}
    relatives = [relative for relative, _ in entries]
    return Snapshot(settings(corpus), files, relatives)


def settings(corpus: Corpus) -> dict[str, Any]:
    return {
        "format": MANIFEST_FORMAT,
        "max_words": corpus.max_words,
        "html_drop": list(corpus.html_drop),  # the site's own bars: other pages when it changes
    }


def _file_stat(status: os.stat_result) -> list[int]:
    return [status.st_size, status.st_mtime_ns, status.st_ino]


def _listing(corpus: Corpus) -> dict[str, Any]:
    """What chose the files: the same files under the same choice need no new listing."""
    return {
        "include": list(corpus.include),
        "exclude": list(corpus.exclude),
        "follow_symlinks": corpus.follow_symlinks,
    }


def unchanged_by_stat(target: Path, corpus: Corpus, source: Path) -> dict[str, Any] | None:
    """The manifest when it proves the corpus unchanged without listing its folder (the files
    chosen the same way, the index complete, every folder and file with its recorded stat);
    else None."""
    manifest = read_manifest(target)
    if manifest is None or manifest.get("listing") != _listing(corpus):
        return None
    folders, files = manifest.get("folders"), manifest.get("files")
    stored = manifest.get("settings") or {}
    if not isinstance(folders, dict) or not isinstance(files, dict):
        return None
    if any(stored.get(key) != value for key, value in settings(corpus).items()):
        return None
    if not ((target / PAGES_FILE).is_file() and keyword_complete(target)):
        return None
    root = str(source)
    try:
        for relative, data in folders.items():
            if _folder_stat(os.stat(os.path.join(root, relative))) != data:
                return None
        if not _files_unchanged(root, files):
            return None
    except (OSError, ValueError):
        return None
    return manifest


def _files_unchanged(root: str, files: dict[str, Any]) -> bool:
    """Whether every file has its recorded stat data. Each folder is opened once and its files
    stat'ed relative to it where the system can: a path walked from the root for every file
    was a quarter of this check's time (6,000 files at 100,000 pages of the Python docs)."""
    if os.stat not in os.supports_dir_fd or not hasattr(os, "O_DIRECTORY"):
        return all(
            _file_stat(os.stat(os.path.join(root, relative))) == data
            for relative, data in files.items()
        )
    by_folder: dict[str, list[tuple[str, Any]]] = {}
    for relative, data in files.items():
        folder, _, name = relative.rpartition("/")
        by_folder.setdefault(folder, []).append((name, data))
    for folder, named in by_folder.items():
        handle = os.open(os.path.join(root, folder), os.O_RDONLY | os.O_DIRECTORY)
        try:
            if any(_file_stat(os.stat(name, dir_fd=handle)) != data for name, data in named):
                return False
        finally:
            os.close(handle)
    return True


def _folder_stat(status: os.stat_result) -> list[int]:
    return [status.st_mtime_ns, status.st_ino]


def _folders(corpus: Corpus, source: Path, files: dict[str, list[int]]) -> dict[str, Any] | None:
    """Every folder a listing of the corpus enters, with its stat data (glob's walk: links to
    folders followed, hidden names skipped); None when the stat data cannot prove anything: a
    pattern that names a hidden folder, or a folder or file changed too recently for its
    timestamp to tell a later change apart (RACY_SECONDS)."""
    if any(part.startswith(".") for pattern in corpus.include for part in pattern.split("/")):
        return None
    now = time.time_ns()
    if any(now - data[1] < RACY_SECONDS * 1e9 for data in files.values()):
        return None
    folders: dict[str, list[int]] = {}
    seen: set[tuple[int, int]] = set()
    for here, names, _ in os.walk(source, followlinks=True):
        status = os.stat(here)
        if (status.st_dev, status.st_ino) in seen:  # a loop of links: walked once
            names.clear()
            continue
        seen.add((status.st_dev, status.st_ino))
        if now - status.st_mtime_ns < RACY_SECONDS * 1e9:
            return None
        names[:] = sorted(name for name in names if not name.startswith("."))
        folders[os.path.relpath(here, source).replace(os.sep, "/")] = _folder_stat(status)
    return folders


def read_manifest(target: Path) -> dict[str, Any] | None:
    try:
        return json.loads((target / MANIFEST_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def stale_reason(target: Path, snapshot: Snapshot, source: Path, corpus: Corpus) -> str | None:
    """None when the index is up to date; otherwise why it is not."""
    manifest = read_manifest(target)
    complete = (target / PAGES_FILE).is_file() and keyword_complete(target)
    if manifest is None or not complete:
        return "missing"
    stored = manifest.get("settings") or {}
    if {key: stored.get(key) for key in snapshot.settings} != snapshot.settings:
        return "stale (page settings changed)"
    change = file_change(manifest, snapshot.files, lambda: snapshot.content_sha256(source))
    if change is Change.CONTENT:
        return "stale (corpus changed)"
    record = listing_record(corpus, source, snapshot)
    if change is Change.TOUCHED or manifest.get("folders") != record["folders"]:
        # a touch, a checkout, a folder's new stat: remembered for the next check
        write_manifest(target, {**manifest, "files": snapshot.files, **record})
    return None


def listing_record(corpus: Corpus, source: Path, snapshot: Snapshot) -> dict[str, Any]:
    """The manifest's record of how the corpus was listed, for `unchanged_by_stat`."""
    try:
        folders = _folders(corpus, source, snapshot.files)
    except OSError:
        folders = None
    return {"listing": _listing(corpus), "folders": folders}


def write_manifest(target: Path, manifest: dict[str, Any]) -> None:
    temporary = target / f".{MANIFEST_FILE}.tmp"
    temporary.write_text(json.dumps(manifest, indent=1, sort_keys=True), encoding="utf-8")
    os.replace(temporary, target / MANIFEST_FILE)
