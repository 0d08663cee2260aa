"""The README's "Five minutes with runner" commands, run as written against a copy of
pipelines/ in a temporary folder (so that no index or session is written into the repository):
each must exit 0, or the status its comment announces ("exit code 3" for the clarifying
question). `make demo` and `source .venv/bin/activate` are the only other lines it may hold.

A `<id …>` placeholder stands for the last session id printed before it, as a reader would
copy it. A command that names a session used before must continue it (not print `round 1`).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from click.testing import Result

from .conftest import ROOT, failure, session_ids

README = ROOT / "README.md"
SECTION = "## Five minutes with runner"
NOT_RUN = {"make demo", "source .venv/bin/activate"}


def five_minutes() -> list[tuple[str, int]]:
    """The section's `runner` commands, each with the exit status its comments announce."""
    text = README.read_text(encoding="utf-8")
    assert SECTION in text, f"README.md has no section {SECTION!r}"
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    block = re.search(r"^```sh\n(.*?)^```", section, re.M | re.S)
    assert block is not None, f"README.md: the section {SECTION!r} has no sh block"
    commands: list[tuple[str, int]] = []
    for line in block[1].splitlines():
        command, *comment = re.split(r"(?:^|\s)#", line, maxsplit=1)
        command = command.strip()
        status = re.search(r"exit code (\d+)", "".join(comment))
        if not command:  # a comment line: about the command above it
            if status is not None:
                commands[-1] = (commands[-1][0], int(status[1]))
            continue
        # a server never ends: tests/serve and tests/playground run them
        if command.startswith(("runner serve ", "runner playground ")):
            assert all((ROOT / path).exists() for path in shlex.split(command)[2:]), command
        elif command.startswith("runner "):
            commands.append((command, int(status[1]) if status else 0))
        else:
            assert command in NOT_RUN, f"README.md: {command!r} is neither `runner …` nor known"
    return commands


def test_the_five_minutes_commands_work_as_written(
    cli: Callable[..., Result], tmp_path: Path
) -> None:
    shutil.copytree(
        ROOT / "pipelines", tmp_path / "pipelines", ignore=shutil.ignore_patterns(".runner")
    )
    commands = five_minutes()
    assert len(commands) >= 5, f"README.md: too few commands understood: {commands}"
    sessions: list[str] = []  # the ids printed or given so far, the last one last
    for command, status in commands:
        for placeholder in re.findall(r"<[^<>]*>", command):
            assert re.search(r"\bid\b", placeholder) and sessions, f"README.md: {command}"
            command = command.replace(placeholder, sessions[-1])
        argv = shlex.split(command)[1:]
        given = argv[argv.index("--session") + 1] if "--session" in argv else None
        result = cli(*argv)
        assert result.exit_code == status, failure(command, result)
        if given in sessions:  # it continues a session: not its first round
            assert not re.search(r"\bround 1\b", result.output), failure(command, result)
        sessions += [given] if given else session_ids(result.output)


OWN_PIPELINE = "## A pipeline of your own"


def test_the_pipeline_of_your_own_script_runs_as_pasted(tmp_path: Path) -> None:
    """The README's three-step script, pasted into bash in an empty folder with `runner` on the
    PATH: every step must succeed (`bash -e`), and the test case it writes must pass."""
    text = README.read_text(encoding="utf-8")
    assert OWN_PIPELINE in text, f"README.md has no section {OWN_PIPELINE!r}"
    section = text.split(OWN_PIPELINE, 1)[1].split("\n## ", 1)[0]
    block = re.search(r"^```sh\n(.*?)^```", section, re.M | re.S)
    assert block is not None, f"README.md: the section {OWN_PIPELINE!r} has no sh block"
    bin_dir = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", "")}
    done = subprocess.run(
        ["bash", "-e", "-c", block[1]],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "desk/desk.yaml: ok" in done.stdout
    assert "[hours.md p. 1]" in done.stdout
    assert "1 passed, 0 failed" in done.stdout
