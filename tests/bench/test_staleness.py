"""A figure older than the code it measures is marked stale (issue 33, point 6): tried on a fake
change in a repository of its own, so that no real history is needed."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

import bench.readme
from bench import readme, summary
from bench.staleness import measured_paths, staleness

# a benchmark `serve` split in three (as bench.serve is), the presenter and a describer beside it
FILES = {
    "runner/engine.py": "ENGINE = 1\n",
    "docs/serve.md": "# serve\n",
    "bench/serve.py": (
        "from bench.serve_worker import worker\n"
        "from bench.serve_report import section\n"
        "from bench.retrieval import machine\n"
        "def main() -> None:\n"
        "    from bench import serve_load\n"
    ),
    "bench/serve_worker.py": "def worker() -> None: ...\n",
    "bench/serve_load.py": "def load() -> None: ...\n",
    "bench/serve_report.py": "def section() -> str: ...\n",
    "bench/retrieval.py": "def machine() -> dict: ...\n",
}


def _commit(root: Path, message: str) -> str:
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-q", "-m", message], cwd=root, check=True)
    done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True)
    return done.stdout.strip()


@pytest.fixture
def repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A git repository holding FILES, one commit, that bench.readme (and so git) works in."""
    root = tmp_path / "repo"
    for name, text in FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    for variable in ("GIT_AUTHOR", "GIT_COMMITTER"):
        monkeypatch.setenv(f"{variable}_NAME", "bench")
        monkeypatch.setenv(f"{variable}_EMAIL", "bench@example.invalid")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    _commit(root, "figures measured here")
    monkeypatch.setattr(bench.readme, "BENCH", root / "bench")
    return root


def _change(root: Path, name: str) -> None:
    with (root / name).open("a", encoding="utf-8") as file:
        file.write("# changed\n")
    _commit(root, f"change {name}")


def _stamped_at_head() -> dict:
    return {"stamp": {"commit": readme.git("rev-parse", "HEAD")}}


def test_a_figure_is_not_stale_at_the_commit_it_was_measured_at(repository: Path) -> None:
    assert staleness("serve", _stamped_at_head()) is None


@pytest.mark.parametrize(
    "name", ["runner/engine.py", "bench/serve.py", "bench/serve_worker.py", "bench/serve_load.py"]
)
def test_a_change_to_the_runner_or_a_bench_module_the_benchmark_imports_makes_it_stale(
    repository: Path, name: str
) -> None:
    figures = _stamped_at_head()
    _change(repository, name)
    why = staleness("serve", figures)
    assert why is not None and why.startswith(f"{name} changed after ")
    assert f"change {name}" in why


@pytest.mark.parametrize("name", ["docs/serve.md", "bench/serve_report.py", "bench/retrieval.py"])
def test_a_change_to_what_only_presents_or_describes_the_figures_leaves_them_fresh(
    repository: Path, name: str
) -> None:
    figures = _stamped_at_head()
    _change(repository, name)
    assert staleness("serve", figures) is None


def test_the_bench_modules_measured_are_found_from_the_imports_at_any_depth(
    repository: Path,
) -> None:
    (repository / "bench/serve_load.py").write_text("import bench.simllm\n", encoding="utf-8")
    (repository / "bench/simllm.py").write_text("", encoding="utf-8")
    assert measured_paths("serve")[-4:] == (
        "bench/serve.py",
        "bench/serve_load.py",
        "bench/serve_worker.py",
        "bench/simllm.py",
    )


def test_the_summary_lists_a_stale_benchmark_that_has_no_summary_row(
    repository: Path, readme_path: Path
) -> None:
    readme.write_results("eval", {"figure": 1})  # stamped at HEAD
    assert "`eval`" not in summary.section()
    _change(repository, "runner/engine.py")
    assert "- `eval` (its section; no row here): runner/engine.py changed after" in (
        summary.section()
    )


def test_the_real_serve_benchmark_is_measured_with_the_modules_split_out_of_it() -> None:
    paths = measured_paths("serve")
    assert {"bench/serve.py", "bench/serve_worker.py", "bench/serve_load.py"} <= set(paths)
    assert "bench/serve_report.py" not in paths and "bench/readme.py" not in paths
