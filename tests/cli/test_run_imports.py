"""`runner run` imports only what its round uses: a keyword search over a corpus with the offline
LLM, on a pipeline validated before and unchanged since, imports neither bm25s, numpy nor
jsonschema, nor runner's semantic checks (issue 33's start-up target: numpy and bm25s alone were
0.15-0.25 s of a 0.5 s budget), nor what only other rounds use (`regex` for authors' patterns,
the lookup tables, the embedding package: HEAVY)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

PIPELINE = """\
domain: kettle
llm: {provider: offline}
corpora:
  manual: {path: manual}
retrieval_tool: manual_rag
tools:
  - name: manual_rag
    kind: retrieve
    corpus: manual
    top_k: 2
"""
HEAVY = (
    "bm25s",
    "numpy",
    "jsonschema",
    "runner.config.checks",
    "llama_index",
    # what only some rounds use, imported where they use it (1-8 ms each): authors' patterns,
    # an extraction's value patterns, lookup tables and grounding checks, a traceback's
    # credential patterns, the embedding package of a corpus with page vectors, the pager of an
    # index build
    "regex",
    "runner.llm.providers.offline_extract",
    "runner.tables",
    "runner.llm.grounding",
    "runner.text.credentials",
    "runner.embedding",
    "runner.retrieval.navigation",
)
REPORT = (
    "import sys, atexit; "
    f"atexit.register(lambda: print(sorted(n for n in {HEAVY!r} if n in sys.modules), "
    "file=sys.stderr)); "
    "from runner.cli import main; main()"
)


def run(path: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", REPORT, "run", str(path), "How do I descale the kettle?"]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


def test_a_second_run_imports_neither_bm25s_numpy_nor_the_checks(tmp_path: Path) -> None:
    (tmp_path / "manual").mkdir()
    (tmp_path / "manual" / "guide.md").write_text("# Descaling\n\nDescale the kettle monthly.\n")
    path = tmp_path / "kettle.yaml"
    path.write_text(PIPELINE)
    old = time.time() - 3600  # the validation record trusts no folder changed just now
    for named in (tmp_path / "manual" / "guide.md", tmp_path / "manual", path):
        os.utime(named, (old, old))
    first = run(path)  # validates, builds the index
    assert first.returncode == 0, first.stderr
    assert "numpy" in first.stderr and "runner.config.checks" in first.stderr
    second = run(path)
    assert second.returncode == 0, second.stderr
    assert "Descale the kettle monthly" in second.stdout
    assert second.stderr.strip().splitlines()[-1] == "[]"
