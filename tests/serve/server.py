"""`runner serve` as a real process on a free port of 127.0.0.1 (or of the loopback address
`host` names), for the HTTP tests."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

START_TIMEOUT_S = 60.0


class ServeProcess:
    def __init__(
        self,
        paths: list[Path],
        *options: str,
        env: dict[str, str] | None = None,
        host: str = "127.0.0.1",
    ):
        self.port = free_port(host)
        self.url = f"http://{f'[{host}]' if ':' in host else host}:{self.port}"
        self.log = Path(os.environ.get("TMPDIR", "/tmp")) / f"runner-serve-{self.port}.log"
        command = [
            sys.executable,
            "-c",
            "from runner.cli import main; main()",
            "serve",
            *map(str, paths),
            "--host",
            host,
            "--port",
            str(self.port),
            "--log-level",
            "warning",
            *options,
        ]
        environment = {**os.environ, **(env or {})}
        for name in ("RUNNER_LLM", "RUNNER_STATE"):
            if env is None or name not in env:
                environment.pop(name, None)
        self._log_file = self.log.open("w")
        self._final_output = ""
        self.process = subprocess.Popen(
            command, env=environment, stdout=self._log_file, stderr=subprocess.STDOUT
        )

    def wait_ready(self) -> ServeProcess:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"runner serve exited {self.process.returncode}:\n{self.output}")
            try:
                if httpx.get(f"{self.url}/healthz", timeout=1).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            time.sleep(0.05)
        self.stop()
        raise TimeoutError(f"runner serve did not start in {START_TIMEOUT_S} s:\n{self.output}")

    @property
    def output(self) -> str:
        if not self._log_file.closed:
            self._log_file.flush()
        return self._final_output or self.log.read_text(errors="replace")

    def kill(self) -> None:
        """kill -9: no shutdown, no cleanup, as a crash would end it."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> int:
        """SIGTERM, as a process manager stops it; its exit status (uvicorn ends a graceful
        shutdown by re-raising the signal: -15)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
        self._final_output = self.output
        self._log_file.close()
        self.log.unlink(missing_ok=True)
        return self.process.returncode


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]
