"""Tests of `runner test`: the `shop` fixture pipeline (no corpora, so no index and no
llama-index) copied to a temporary folder, with test-case files written beside it."""

from __future__ import annotations

import shutil
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from runner.cli import main

FIXTURES = Path(__file__).parent / "fixtures"

# The scripted replies of a comparison the coordinator decomposes (products KD-450, KW-620).
COMPARE_RULES = """\
llm:
  script:
    - {purpose: decompose, tool: compare, task: "(?i)compare", reply: {products: [KD-450, KW-620]}}
    - {purpose: decompose, tool: compare, reply: {products: []}}
    - {purpose: suitability, task: "(?i)compare", reply: {compare: true, price: false}}
    - {purpose: suitability, reply: {compare: false, price: true}}
    - {purpose: tool, tool: compare, reply: "The KD-450 costs 100 EUR more than the KW-620."}
    - {purpose: answer, reply: "The KW-620 costs 449 EUR."}
"""


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    # the runs must not pick up a provider or a permission from the developer's shell
    monkeypatch.delenv("RUNNER_LLM", raising=False)
    monkeypatch.delenv("RUNNER_ALLOW_PYTHON", raising=False)


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    """The folder holding a copy of the shop pipeline (shop.yaml, products.csv)."""
    folder = tmp_path / "shop"
    shutil.copytree(FIXTURES / "shop", folder)
    return folder


@pytest.fixture
def write(shop: Path) -> Callable[..., Path]:
    """Write a test-case file (dedented) into the shop folder; returns its path."""

    def write_file(text: str, name: str = "cases.yaml") -> Path:
        path = shop / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        return path

    return write_file


@pytest.fixture
def cli() -> Callable[..., Result]:
    runner = CliRunner()

    def invoke(*args: Any) -> Result:
        return runner.invoke(main, [str(arg) for arg in args])

    return invoke
