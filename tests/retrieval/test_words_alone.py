"""A pipeline that searches by meaning (`mode: hybrid`) on a machine without the `embed` extra
(runner/retrieval/words_alone.py): it runs on words alone and says so once a process, not once
a question. The missing extra is simulated in a child process whose importer finds none of the
extra's modules, as on an install without it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).parents[2]
WITHOUT_EXTRA = """\
import sys
from importlib.machinery import PathFinder

MISSING = {"onnxruntime", "onnx", "tokenizers", "safetensors", "threadpoolctl"}


class WithoutExtra(PathFinder):
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name.split(".")[0] in MISSING:
            return None
        return PathFinder.find_spec(name, path, target)


sys.meta_path[:] = [WithoutExtra if found is PathFinder else found for found in sys.meta_path]
"""
PIPELINE = """\
version: 1
domain: desk
corpora:
  docs: {path: docs}
retrieval_tool: docs_rag
tools:
  - name: docs_rag
    kind: retrieve
    corpus: docs
    mode: hybrid
    top_k: 2
"""
CASES = """\
cases:
  - name: opening hours
    turns:
      - message: Which days is the desk open?
        expect: {outcome: answer, sources: [hours.md]}
  - name: parking
    turns:
      - message: Where can I park?
        expect: {outcome: answer, sources: [parking.md]}
"""


def desk(folder: Path) -> Path:
    (folder / "docs").mkdir(parents=True)
    (folder / "tests").mkdir()
    (folder / "docs" / "hours.md").write_text(
        "# Opening hours\n\nThe desk is open Monday to Friday. It is closed at weekends.\n"
    )
    (folder / "docs" / "parking.md").write_text(
        "# Parking\n\nVisitors park in the car park behind the building.\n"
    )
    (folder / "desk.yaml").write_text(PIPELINE)
    (folder / "tests" / "desk.yaml").write_text(CASES)
    (folder / "site").mkdir()
    (folder / "site" / "sitecustomize.py").write_text(WITHOUT_EXTRA)
    return folder


def without_extra(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    paths = [str(folder / "site"), str(ROOT), os.environ.get("PYTHONPATH", "")]
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, paths))}
    command = [sys.executable, "-c", "from runner.cli import main; main()", *args]
    return subprocess.run(
        command, cwd=folder, env=environment, capture_output=True, text=True, timeout=120
    )


def test_without_the_extra_a_hybrid_pipeline_answers_on_words_and_says_so_once(
    tmp_path: Path,
) -> None:
    folder = desk(tmp_path / "desk")
    done = without_extra(folder, "test", "tests/")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed, 0 failed" in done.stdout
    said = (done.stdout + done.stderr).count("searched by words alone")
    assert said == 1, done.stderr
    assert "pip install 'runner[embed]'" in done.stderr


def test_the_simulated_install_lacks_the_extra(tmp_path: Path) -> None:
    folder = desk(tmp_path / "desk")
    check = textwrap.dedent(
        """
        import importlib.util
        print(importlib.util.find_spec("onnxruntime"), importlib.util.find_spec("tokenizers"))
        """
    )
    paths = os.pathsep.join([str(folder / "site"), str(ROOT)])
    done = subprocess.run(
        [sys.executable, "-c", check],
        env={**os.environ, "PYTHONPATH": paths},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.stdout.split() == ["None", "None"]
