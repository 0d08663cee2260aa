"""docs/plugins.md's complete example, run as written: its Python module and its pipeline."""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from runner.cli import main

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "plugins.md"
PRODUCTS = ROOT / "tests" / "cli" / "fixtures" / "shop" / "products.csv"


def code_block(language: str, first_line: str) -> str:
    """The doc's fenced block of `language` whose first line is `first_line`."""
    blocks = re.findall(rf"```{language}\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    return next(block for block in blocks if block.splitlines()[0] == first_line)


@pytest.fixture
def example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv("RUNNER_LLM", raising=False)
    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "shop_plugins.py").write_text(
        code_block("python", "# plugins/shop_plugins.py"), encoding="utf-8"
    )
    (tmp_path / "shop.yaml").write_text(code_block("yaml", "# shop.yaml"), encoding="utf-8")
    shutil.copy(PRODUCTS, tmp_path / "products.csv")
    # the only answer the script gives needs both the advice and the delivery plan (C33)
    (tmp_path / "script.yaml").write_text(
        "- purpose: answer\n"
        "  prompt: '(?s)^(?=.*KW-620 is out of stock; KW-720X is not)"
        "(?=.*Delivery to 1011 AB: KD-450 from stock)'\n"
        "  reply: advice and plan\n",
        encoding="utf-8",
    )
    yield tmp_path
    sys.modules.pop("shop_plugins", None)
    entry = str((tmp_path / "plugins").resolve())
    if entry in sys.path:
        sys.path.remove(entry)


def run(folder: Path, message: str) -> dict:
    args = [
        "run",
        str(folder / "shop.yaml"),
        message,
        "--session",
        "b1",
        "--allow-python",
        "--llm-script",
        str(folder / "script.yaml"),
        "--json",
    ]
    result = CliRunner().invoke(main, args)
    assert result.exit_code in (0, 3), result.output
    return json.loads(result.stdout)


def test_the_plugin_example_of_the_docs_runs_as_described(example: Path):
    first = run(example, "Can you deliver the KD-450 with the KW-620?")
    assert first["question"] == "Which postcode should we deliver to?"
    children = {child["task_no"]: child for child in first["tasks"]["children"]}
    assert list(children) == ["1.1", "1.2", "1.alt"]
    assert children["1.alt"]["status"] == "done"  # RUN: the KW-620 is out of stock
    assert children["1.alt"]["tools"][0]["guaranteed"]

    second = run(example, "1011 AB")
    assert second["answer"] == "advice and plan"
    delivery = second["tasks"]["tools"][0]
    assert (delivery["name"], delivery["reason"], delivery["items"]) == ("delivery", "rule", 1)
