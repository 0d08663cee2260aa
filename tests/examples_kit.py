"""The example pipelines copied into a test's folder with their indexes already built.

The examples search by meaning (`mode: hybrid`), so a copy without its `.runner/` would embed
its whole handbook again in every test module that copies it (tens of seconds each). The
indexes (and lookup tables' key stores) are built once a test process, in a folder of its own,
and copied in beside the pipeline: the files keep their times (copy2), so the copy's index is
up to date and nothing is embedded again. Sessions are never copied: each copy starts empty.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PIPELINES = ROOT / "pipelines"
KEPT = ("indexes",)  # what a copy gets of the built `.runner/`
_BUILT: dict[str, Path] = {}


def copy_example(name: str, target: Path, *, ignore: tuple[str, ...] = ()) -> Path:
    """pipelines/<name>/ copied to `target` (its `.runner/` left out, as are `ignore`'s
    patterns), with the indexes built once for this process copied into `target/.runner/`."""
    shutil.copytree(PIPELINES / name, target, ignore=shutil.ignore_patterns(".runner", *ignore))
    built = _built(name) / ".runner"
    for part in KEPT:
        if (built / part).is_dir():
            shutil.copytree(built / part, target / ".runner" / part)
    return target


def _built(name: str) -> Path:
    """A copy of pipelines/<name>/ whose corpora and tables are indexed, made once."""
    if name not in _BUILT:
        from runner.config import load_pipeline
        from runner.retrieval import open_corpus

        folder = Path(tempfile.mkdtemp(prefix=f"runner-example-{name}-")) / name
        shutil.copytree(PIPELINES / name, folder, ignore=shutil.ignore_patterns(".runner"))
        for pipeline_file in sorted(folder.glob("*.yaml")):
            pipeline = load_pipeline(pipeline_file)
            for corpus in pipeline.corpora:
                open_corpus(pipeline, corpus)
        _BUILT[name] = folder
    return _BUILT[name]
