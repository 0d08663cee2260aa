"""The benches start runner as an install runs it: its bytecode compiled and kept
(bench/processes.py), whatever PYTHONDONTWRITEBYTECODE the shell has."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.processes import checkout_env


def checkout(tmp_path: Path) -> Path:
    package = tmp_path / "runner"
    package.mkdir()
    (package / "__init__.py").write_text("VALUE = 1\n", encoding="utf-8")
    return tmp_path


def test_a_checkout_s_modules_are_compiled_before_its_process_starts(tmp_path: Path) -> None:
    checkout_env(checkout(tmp_path))
    assert list((tmp_path / "runner" / "__pycache__").glob("__init__.*.pyc"))


def test_its_process_may_write_bytecode_whatever_the_shell_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    env = checkout_env(checkout(tmp_path))
    assert "PYTHONDONTWRITEBYTECODE" not in env
    assert env["PYTHONPATH"] == str(tmp_path)
