"""The service tests: the `shop` pipeline of the command-line tests (a scripted LLM, a
clarifying question), copied to a temporary folder, served by one `Service`."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from runner.serve.service import Limits, Service

SHOP = Path(__file__).parent.parent / "cli" / "fixtures" / "shop"
COMPARE = "Compare the KD-450 and the KW-620"
ASK = "What does it cost?"
QUESTION = "Which model do you mean? (for example KW-620)"


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    folder = tmp_path / "shop"
    shutil.copytree(SHOP, folder)
    return folder / "shop.yaml"


@pytest.fixture
def service(shop: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Service]:
    monkeypatch.delenv("RUNNER_STATE", raising=False)
    monkeypatch.delenv("RUNNER_LLM", raising=False)
    opened = Service.open([shop.parent], limits=Limits(max_message_chars=200, lock_wait_s=2))
    yield opened
    opened.close()
