"""`runner run` imports only what its round uses: a keyword search over a corpus with the offline
LLM, on a pipeline validated before and unchanged since, imports neither bm25s, numpy nor
jsonschema, nor runner's semantic checks (issue 33's start-up target: numpy and bm25s alone were
0.15-0.25 s of a 0.5 s budget), nor what only other rounds use (`regex` for authors' patterns,
the lookup tables, a packed model's zipfile: HEAVY)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

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
    # credential patterns, the model files of a corpus with page vectors (zipfile), the pager of
    # an index build
    "regex",
    "runner.llm.providers.offline_extract",
    "runner.tables",
    "runner.llm.grounding",
    "runner.text.credentials",
    "zipfile",
    "runner.retrieval.navigation",
)
# runner's dataclasses whose __doc__ is the one dataclasses makes when a class has none: it
# calls inspect.signature for it at import, in every process (59 such classes were 1.3% of a
# keyword run's instructions, about 4 ms)
UNDOCUMENTED = (
    "sorted(f'{m.__name__}.{c.__name__}' for m in list(sys.modules.values()) "
    "if m.__name__.startswith('runner.') for c in vars(m).values() "
    "if isinstance(c, type) and c.__module__ == m.__name__ and dataclasses.is_dataclass(c) "
    "and c.__doc__ == c.__name__ + str(inspect.signature(c)).replace(' -> None', ''))"
)
REPORT = (
    "import sys, atexit, dataclasses, inspect; "
    f"atexit.register(lambda: print(sorted(n for n in {HEAVY!r} if n in sys.modules), "
    "file=sys.stderr)); "
    f"atexit.register(lambda: print({UNDOCUMENTED}, file=sys.stderr)); "
    "from runner.cli import main; main()"
)


def run(path: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", REPORT, "run", str(path), "How do I descale the kettle?"]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture(scope="module")
def second_run(tmp_path_factory: pytest.TempPathFactory) -> subprocess.CompletedProcess[str]:
    """The second `runner run` of a keyword pipeline: the first validated it, built its index."""
    folder = tmp_path_factory.mktemp("kettle")
    (folder / "manual").mkdir()
    (folder / "manual" / "guide.md").write_text("# Descaling\n\nDescale the kettle monthly.\n")
    path = folder / "kettle.yaml"
    path.write_text(PIPELINE)
    old = time.time() - 3600  # the validation record trusts no folder changed just now
    for named in (folder / "manual" / "guide.md", folder / "manual", path):
        os.utime(named, (old, old))
    first = run(path)  # validates, builds the index
    assert first.returncode == 0, first.stderr
    assert "numpy" in first.stderr and "runner.config.checks" in first.stderr
    second = run(path)
    assert second.returncode == 0, second.stderr
    assert "Descale the kettle monthly" in second.stdout
    return second


def test_a_second_run_imports_neither_bm25s_numpy_nor_the_checks(
    second_run: subprocess.CompletedProcess[str],
) -> None:
    assert second_run.stderr.strip().splitlines()[-1] == "[]"


def test_every_dataclass_a_run_imports_has_its_docstring(
    second_run: subprocess.CompletedProcess[str],
) -> None:
    undocumented = ast.literal_eval(second_run.stderr.strip().splitlines()[-2])
    assert undocumented == []
