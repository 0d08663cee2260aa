"""What travels to a Ray cluster's nodes: the pipeline's folder with its indexes, and the files
the evaluation names; not the runs, the sessions or the response cache."""

from __future__ import annotations

from pathlib import Path

from runner.eval.setup import EvalSpec
from runner.eval.shipping import pack, unpack
from tests.eval.conftest import write


def test_a_pipeline_travels_with_its_index_and_files_but_not_its_runs(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".runner" / "indexes" / "docs").mkdir(parents=True)
    (home / ".runner" / "eval" / "run-1").mkdir(parents=True)
    write(home / "p.yaml", "version: 1\n")
    write(home / ".runner" / "indexes" / "docs" / "pages.db", "index")
    write(home / ".runner" / "eval" / "run-1" / "summary.json", "{}")
    write(home / ".runner" / "state.sqlite", "sessions")
    script = write(tmp_path / "rules.yaml", "- {purpose: answer, reply: hi}\n")
    spec = EvalSpec(home / "p.yaml", llm_script=script)

    moved = unpack(pack(spec), tmp_path / "node", spec)

    copy = moved.pipeline.parent
    assert moved.pipeline.read_text(encoding="utf-8") == "version: 1\n"
    assert (copy / ".runner" / "indexes" / "docs" / "pages.db").is_file()
    assert not (copy / ".runner" / "eval").exists()
    assert not (copy / ".runner" / "state.sqlite").exists()
    assert moved.llm_script is not None
    assert moved.llm_script.read_text(encoding="utf-8") == script.read_text(encoding="utf-8")
