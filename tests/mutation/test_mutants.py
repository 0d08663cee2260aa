"""A small mutation check (issue: tests that let a change through): each mutant of
`mutants.MUTANTS` is applied to a copy of the project and the tests named for it must fail
there. A mutant that survives is a behaviour the suite does not hold."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .mutants import MUTANTS, Mutant

ROOT = Path(__file__).resolve().parents[2]
# what a test run needs besides the code: the copy is the project as the tests see it
COPIED = ("runner", "tests", "schemas", "templates", "pipelines", "pyproject.toml")


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    copy = tmp_path_factory.mktemp("mutants") / "project"
    copy.mkdir()
    for name in COPIED:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, copy / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, copy / name)
    return copy


def test_every_mutant_names_text_that_occurs_once_in_its_file() -> None:
    for mutant in MUTANTS:
        text = (ROOT / mutant.path).read_text(encoding="utf-8")
        assert text.count(mutant.original) == 1, (
            f"{mutant.path}: the text of the mutant for {mutant.rule!r} occurs "
            f"{text.count(mutant.original)} times; move the entry in tests/mutation/mutants.py "
            "with the code it guards"
        )


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m.rule.split(":")[0] for m in MUTANTS])
def test_the_suite_kills_the_mutant(project: Path, mutant: Mutant) -> None:
    path = project / mutant.path
    original = path.read_text(encoding="utf-8")
    path.write_text(original.replace(mutant.original, mutant.mutant, 1), encoding="utf-8")
    try:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-x",
                "-q",
                "-p",
                "no:cacheprovider",
                "--ignore=tests/mutation",
                *mutant.tests,
            ],
            cwd=project,
            env={**os.environ, "PYTHONPATH": str(project), "PYTHONDONTWRITEBYTECODE": "1"},
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
    finally:
        path.write_text(original, encoding="utf-8")
    assert done.returncode == 1, (
        f"the mutant survived ({mutant.rule}): {mutant.path} with {mutant.mutant.strip()!r} "
        f"passes {' '.join(mutant.tests)}\n{done.stdout[-2000:]}{done.stderr[-2000:]}"
    )
