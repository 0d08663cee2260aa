"""The playground's fixtures: a copy of the support example, the real `runner playground`
command serving it on 127.0.0.1, and a headless Debian chromium driven through selenium.

The browser and the server are opened once per module (they cost a few seconds each). The
screenshots the browser tests take are the ones docs/playground.md shows: they are written to
docs/img/ only when RUNNER_UPDATE_SCREENSHOTS=1 (the suite leaves the work tree as it found
it), otherwise to a folder of the temporary directory."""

from __future__ import annotations

import contextlib
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
SUPPORT = ROOT / "pipelines" / "support"
IMAGES = ROOT / "docs" / "img"
# where the browser tests' screenshots go: the docs' own images only when asked for
SHOTS = (
    IMAGES
    if os.environ.get("RUNNER_UPDATE_SCREENSHOTS") == "1"
    else Path(tempfile.gettempdir()) / "runner-playground-screenshots"
)
CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
STARTED = "the playground is at "


def copy_support(target: Path) -> Path:
    """The support example without its index and session store: built afresh for the test."""
    shutil.copytree(SUPPORT, target, ignore=shutil.ignore_patterns(".runner", "playground.yaml"))
    return target / "support.yaml"


@pytest.fixture(scope="module")
def support(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_support(tmp_path_factory.mktemp("playground") / "support")


@pytest.fixture(scope="module")
def playground(support: Path) -> Iterator[str]:
    """`runner playground support.yaml --port 0 --no-open`, as a user starts it: its URL."""
    with running_playground(support) as url:
        yield url


@contextlib.contextmanager
def running_playground(support: Path, **environment: str) -> Iterator[str]:
    """`runner playground` started on `support` (with `environment` added), until the block
    ends: its URL."""
    env = {k: v for k, v in os.environ.items() if k not in ("RUNNER_STATE", "RUNNER_LLM")}
    env.update(environment)
    process = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from runner.cli import main; main()",
            "playground",
            str(support),
            "--port",
            "0",
            "--no-open",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
        cwd=support.parent,
    )
    lines: queue.Queue[str] = queue.Queue()
    assert process.stdout is not None
    reader = threading.Thread(
        target=lambda: [lines.put(line) for line in process.stdout], daemon=True
    )
    reader.start()
    output = []
    try:
        while True:
            line = lines.get(timeout=120)
            output.append(line)
            if line.startswith(STARTED):
                break
        yield line[len(STARTED) :].split()[0]
    except queue.Empty:
        pytest.fail("runner playground did not start:\n" + "".join(output))
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """Headless chromium (Debian's, installed by `make browser`), one per module."""
    with chromium() as driver:
        yield driver


@contextlib.contextmanager
def chromium(*, javascript: bool = True) -> Iterator[Any]:
    """A headless chromium until the block ends; `javascript=False`: with script switched off,
    as a reader who turned it off has it."""
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        pytest.fail(
            f"the browser tests need {CHROMIUM} and {CHROMEDRIVER}: run `make browser` "
            "(apt-get install chromium chromium-driver)"
        )
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="runner-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        f"--user-data-dir={profile}",
        "--window-size=1280,900",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    if not javascript:
        options.add_experimental_option(
            "prefs", {"profile.managed_default_content_settings.javascript": 2}
        )
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    driver.implicitly_wait(0)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="module")
def service(support: Path) -> Iterator[Any]:
    """The service `runner serve` would run on the support copy (its own session store)."""
    from runner.service.pipelines import Service

    opened = Service.open([support])
    yield opened
    opened.close()


LOCAL_URL = "http://127.0.0.1"  # a Host the service answers (TestClient's own is refused)


def playground_client(service: Any, tokens: tuple[str, ...] = (), **options: Any) -> Any:
    """A TestClient of the service's app with the playground mounted, as `runner serve
    --playground` composes it."""
    from starlette.testclient import TestClient

    from runner.cli.webapp import compose

    app = compose(service, tokens=tokens, secret=b"test", close_service=False, **options)
    return TestClient(app, base_url=LOCAL_URL, follow_redirects=False)


def csrf_of(client: Any, path: str = "/playground/support/") -> str:
    """The CSRF token the page's forms carry."""
    import re

    found = re.search(r'name="csrf" value="([^"]+)"', client.get(path).text)
    assert found is not None, "the page has no form with a CSRF token"
    return found[1]


def ask(service: Any, message: str, session: str | None = None) -> dict[str, Any]:
    """One round through the service, as the playground runs it."""
    import asyncio

    return asyncio.run(service.run_round("support", message, session_id=session))


def retrieval_round(
    pages: list[dict[str, Any]], query: str = "q"
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A round whose one task ran one retrieval tool, `rag` on corpus `docs`, which ranked
    `pages`: its result and its trace."""
    tool = {
        "name": "rag",
        "key": "1:rag",
        "status": "done",
        "reason": "retrieval",
        "items": 1,
        "guaranteed": False,
    }
    result = {
        "round": 1,
        "outcome": "answer",
        "answer": "",
        "sources": [],
        "tasks": {"task_no": "1", "prompt": query, "status": "done", "tools": [tool]},
    }
    event = {
        "seq": 1,
        "ms": 1.0,
        "event": "retrieval",
        "task": "1",
        "tool": "rag",
        "corpus": "docs",
        "query": query,
        "pages": pages,
    }
    return result, [event]
