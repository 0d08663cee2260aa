"""A service prepares its pipelines before it reports ready (`Runtime.prepare`): no user's
round waits for a corpus to open, an embedding model to load or a module a round needs to be
imported. Run in a fresh process: the test session has imported everything already."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SUPPORT = ROOT / "pipelines" / "support" / "support.yaml"
# a clarification, its answer, a direct question, a comparison: the support example's paths
MESSAGES = [
    "What is the warranty on my kettle?",
    "KE-300",
    "How do I descale the kettle?",
    "Compare the KD-450 and the KD-460",
]
WATCHED = ("runner", "jsonschema", "regex", "onnxruntime", "tokenizers", "numpy")
SCRIPT = """
import asyncio, json, sys
from runner.service.pipelines import Service
from runner.serve.app import create_app
service = Service.open([{support!r}], state={state!r})
create_app(service)  # what `runner serve` imports to serve it
from runner.embedding import models
loaded = sorted(name for name, _ in models._LOADED)
before = set(sys.modules)
async def rounds():
    session = None
    for number, message in enumerate({messages!r}):
        result = await service.run_round(
            "support", message, session_id=session, request_id=f"r{{number}}"
        )
        session = result["session"]
asyncio.run(rounds())
service.close()
imported = sorted(m for m in set(sys.modules) - before if m.split(".")[0] in {watched!r})
print(json.dumps({{"loaded": loaded, "imported": imported}}))
"""


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    state = tmp_path_factory.mktemp("state") / "sessions.sqlite"
    script = SCRIPT.format(
        support=str(SUPPORT), state=str(state), messages=MESSAGES, watched=WATCHED
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr
    figures: dict[str, list[str]] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def test_a_served_pipelines_first_rounds_import_nothing_a_prepared_service_lacks(
    prepared: dict[str, list[str]],
) -> None:
    assert prepared["imported"] == []


def test_a_corpus_searched_by_meaning_has_its_model_loaded_before_the_first_round(
    prepared: dict[str, list[str]],
) -> None:
    pytest.importorskip("onnxruntime")  # (the `embed` extra: words alone without it)
    assert prepared["loaded"] == ["all-MiniLM-L6-v2"]


class Failing:
    """An index whose first search fails as `error` says."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    def warm_up(self) -> None:
        raise self.error


def test_a_model_that_cannot_run_is_warned_of_and_left_for_the_round_to_report(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from runner.app import _warm_up
    from runner.embedding import ModelUnavailable

    _warm_up("handbook", Failing(ModelUnavailable("all-MiniLM-L6-v2: install runner's `embed`")))
    assert "corpus 'handbook': its first search" in caplog.text and "install" in caplog.text


def test_an_unexpected_failure_of_the_first_search_stops_the_start_with_its_traceback() -> None:
    from runner.app import _warm_up

    with pytest.raises(ZeroDivisionError):
        _warm_up("handbook", Failing(ZeroDivisionError("a bug in a search")))
