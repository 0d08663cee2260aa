"""`python` tools from the command line (--allow-python), crash injection and resumption (C24),
and what a run imports."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import FIXTURES

RUNNER = [sys.executable, "-c", "from runner.cli import main; main()"]


@pytest.fixture
def crash(tmp_path: Path) -> Path:
    folder = tmp_path / "crash"
    shutil.copytree(FIXTURES / "crash", folder)
    return folder / "crash.yaml"


def runner(*args: object, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """runner in a process of its own: a crash there must not take the tests down."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("RUNNER_")}
    environment.update(env or {})
    return subprocess.run(
        [*RUNNER, *map(str, args)], capture_output=True, text=True, env=environment, check=False
    )


def runs(pipeline: Path) -> list[str]:
    return (pipeline.parent / "runs.log").read_text(encoding="utf-8").split()


def test_a_python_tool_needs_allow_python_and_nothing_is_imported_without_it(cli, crash):
    result = cli("run", crash, "go")
    assert result.exit_code == 1
    assert "tool 'first' is a python tool (crash_steps:Step)" in result.stderr
    assert "--allow-python" in result.stderr
    assert "crash_steps" not in sys.modules
    assert not (crash.parent / "runs.log").exists()


def test_the_environment_variable_allows_python_tools_too(crash):
    result = runner("run", crash, "go", env={"RUNNER_ALLOW_PYTHON": "1"})
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("both steps ran")
    assert runs(crash) == ["first", "second"]


def test_c24_a_round_killed_mid_way_resumes_without_running_finished_tools_again(cli, crash):
    (crash.parent / "crash-now").touch()
    killed = runner("run", crash, "go", "--session", "k1", "--allow-python")
    assert killed.returncode == 9
    assert runs(crash) == ["first", "second"]

    explained = cli("explain", crash, "--session", "k1")
    assert "an interrupted round on 'go' is stored" in explained.stdout

    (crash.parent / "crash-now").unlink()
    resumed = runner("run", crash, "go", "--session", "k1", "--allow-python")
    assert resumed.returncode == 0, resumed.stderr
    assert resumed.stdout.startswith("both steps ran")
    assert runs(crash) == ["first", "second", "second"]  # `first` finished before the crash

    explained = cli("explain", crash, "--session", "k1")
    assert "Round 1: resuming the interrupted round: 'go'" in explained.stdout


def test_running_a_pipeline_without_corpora_never_imports_llama_index():
    shop = FIXTURES / "shop" / "shop.yaml"
    probe = (
        "import sys, tempfile\n"
        "from click.testing import CliRunner\n"
        "from runner.cli import main\n"
        "state = tempfile.mkdtemp() + '/s.sqlite'\n"
        f"result = CliRunner().invoke(main, ['run', {str(shop)!r}, 'What does it cost?', "
        "'--state', state])\n"
        "assert result.exit_code == 3, result.output\n"
        "print(sorted(m for m in sys.modules if m.startswith('llama_index')))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
