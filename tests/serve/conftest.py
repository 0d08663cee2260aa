"""The service tests: the `shop` pipeline of the command-line tests (a scripted LLM, a
clarifying question), copied to a temporary folder, served by one `Service`."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from runner.service.pipelines import Service, ServiceLimits

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
    opened = Service.open([shop.parent], limits=ServiceLimits(max_message_chars=200, lock_wait_s=1))
    yield opened
    opened.close()


DESK = Path(__file__).parent / "fixtures" / "desk"


def copy_pipelines(folder: Path) -> Path:
    """The shop and desk pipelines, copied into `folder` (served as one folder)."""
    shutil.copytree(SHOP, folder / "shop")
    shutil.copytree(DESK, folder / "desk")
    return folder


class Held:
    """Holds the desk pipeline's `second` step while the block runs (see fixtures/desk)."""

    def __init__(self, folder: Path) -> None:
        self.desk = folder / "desk"

    def __enter__(self) -> Held:
        (self.desk / "held").unlink(missing_ok=True)
        (self.desk / "hold").write_text("", encoding="utf-8")
        return self

    def wait_until_held(self, timeout_s: float = 20.0) -> None:
        import time

        deadline = time.monotonic() + timeout_s
        while not (self.desk / "held").exists():
            assert time.monotonic() < deadline, "the round never reached the held step"
            time.sleep(0.02)

    def __exit__(self, *_exc: object) -> None:
        (self.desk / "hold").unlink(missing_ok=True)
        (self.desk / "held").unlink(missing_ok=True)

    def runs(self) -> list[str]:
        log = self.desk / "runs.log"
        return log.read_text(encoding="utf-8").splitlines() if log.exists() else []
