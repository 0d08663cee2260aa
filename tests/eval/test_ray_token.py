"""`runner eval --ray ADDRESS` against a Ray cluster with token authentication (issue 32.4),
as a user meets one: a head node started by `ray start` with `RAY_AUTH_MODE=token`, runner a
separate process on the same machine. The token comes from Ray's own variable, RAY_AUTH_TOKEN;
without one, the refusal says where a token goes."""

from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from runner.eval import ray_auth
from tests.eval.conftest import ROOT, records, write

pytest.importorskip("ray")

RAY = Path(sys.executable).with_name("ray")
QUESTIONS = """\
- {id: carry, question: can I take my unused holiday days into next year,
   sources: annual-leave-policy.md#Carrying leave over}
- {id: mileage, question: what do I get per mile if I drive my own car}
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def clean_environment(home: Path) -> dict[str, str]:
    """This process's environment without Ray's settings, with a HOME of its own (so no
    ~/.ray/auth_token of the machine's is found) and runner importable by Ray's workers."""
    environment = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    environment["HOME"] = str(home)
    environment["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])
    )
    environment["RAY_USAGE_STATS_ENABLED"] = "0"
    return environment


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """A head node with token authentication on a free port; (its address, its token). Stopped
    by ending the process group this fixture started, nothing else."""
    if not RAY.is_file():
        pytest.skip("the `ray` command is not installed beside this Python")
    folder = tmp_path_factory.mktemp("ray-token")
    token, port = secrets.token_hex(16), free_port()
    environment = clean_environment(folder / "home")
    environment.update({"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": token})
    head = subprocess.Popen(
        [
            str(RAY),
            "start",
            "--head",
            "--block",
            f"--port={port}",
            "--num-cpus=1",
            "--include-dashboard=false",
            f"--temp-dir={folder / 'ray'}",
            "--disable-usage-stats",
        ],
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        _wait_for(port, head)
        yield f"127.0.0.1:{port}", token
    finally:
        _stop(head)


def _wait_for(port: int, head: subprocess.Popen[bytes], timeout_s: float = 90) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if head.poll() is not None:
            raise RuntimeError(f"ray start ended with {head.returncode}")
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                time.sleep(2)  # the GCS listens before the raylet has registered
                return
        time.sleep(0.5)
    raise RuntimeError("the Ray head did not start listening")


def _stop(head: subprocess.Popen[bytes]) -> None:
    for sent in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(head.pid, sent)
        except ProcessLookupError:
            return
        try:
            head.wait(timeout=20)
        except subprocess.TimeoutExpired:
            continue
        time.sleep(1)  # the group's other processes end after the head


def runner_eval(
    address: str, environment: dict[str, str], hr: Path, out: Path
) -> subprocess.CompletedProcess[str]:
    questions = write(out.parent / "questions.yaml", QUESTIONS)
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "from runner.cli import main; main()",
            "eval",
            str(hr),
            str(questions),
            "--ray",
            address,
            "--out",
            str(out),
            "-q",
            "--no-report",
        ],
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_eval_reaches_a_token_cluster_with_the_token_in_ray_auth_token(
    cluster: tuple[str, str], hr_module: Path, tmp_path: Path
) -> None:
    address, token = cluster
    environment = clean_environment(tmp_path / "home")
    environment["RAY_AUTH_TOKEN"] = token  # Ray's own variable; RAY_AUTH_MODE left unset
    done = runner_eval(address, environment, hr_module, tmp_path / "run")
    assert done.returncode == 0, done.stdout + done.stderr
    assert [record["id"] for record in records(tmp_path / "run")] == ["carry", "mileage"]


def test_without_a_token_the_refusal_says_where_the_token_goes(
    cluster: tuple[str, str], hr_module: Path, tmp_path: Path
) -> None:
    address, _token = cluster
    done = runner_eval(address, clean_environment(tmp_path / "home"), hr_module, tmp_path / "run")
    assert done.returncode == 1
    assert f"cannot connect to the Ray cluster at {address}" in done.stderr
    assert "RAY_AUTH_TOKEN" in done.stderr and "ray get-auth-token" in done.stderr


def test_a_token_at_hand_asks_ray_for_token_authentication(tmp_path: Path) -> None:
    environment = {"HOME": str(tmp_path), "RAY_AUTH_TOKEN": "t"}
    ray_auth.prepare(environment)
    assert environment["RAY_AUTH_MODE"] == "token"


def test_a_mode_the_user_chose_is_left_alone() -> None:
    environment = {"RAY_AUTH_MODE": "disabled", "RAY_AUTH_TOKEN": "t"}
    ray_auth.prepare(environment)
    assert environment["RAY_AUTH_MODE"] == "disabled"


def test_without_any_token_no_mode_is_set(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    environment: dict[str, str] = {}
    ray_auth.prepare(environment)
    assert "RAY_AUTH_MODE" not in environment
