"""The wheel carries everything `runner` needs: build it, install it into a fresh venv, and run
`runner validate` and `runner schema` from there, far from the checkout.

The dependencies are not installed again (llama-index alone takes minutes): a .pth file lets the
fresh venv see this environment's site-packages *after* its own, so the `runner` package itself
can only come from the wheel — the test checks that it does.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run(*command: str | Path, cwd: Path, timeout: int = 300) -> str:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    result = subprocess.run(
        [str(part) for part in command],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert result.returncode == 0, f"{command}\n{result.stdout}\n{result.stderr}"
    return result.stdout


def build_wheel(out: Path) -> Path:
    command: list[str | Path] = [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q"]
    if importlib.util.find_spec("hatchling") is not None:
        command.append("--no-build-isolation")  # no download when the backend is at hand
    run(*command, "-w", out, ROOT, cwd=ROOT)
    [wheel] = out.glob("runner-*.whl")
    return wheel


def fresh_venv(folder: Path) -> Path:
    run(sys.executable, "-m", "venv", "--without-pip", folder, cwd=folder.parent)
    python = folder / "bin" / "python"
    site = Path(
        run(
            python,
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['purelib'])",
            cwd=folder.parent,
        ).strip()
    )
    (site / "zz_runner_test_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python


def test_installed_wheel_validates_the_minimal_pipeline_and_prints_the_schema(
    tmp_path: Path,
) -> None:
    wheel = build_wheel(tmp_path / "dist")
    names = zipfile.ZipFile(wheel).namelist()
    assert "runner/_data/schemas/pipeline.schema.json" in names
    assert any(name.startswith("runner/_data/templates/") for name in names)

    python = fresh_venv(tmp_path / "venv")
    run(
        sys.executable,
        "-m",
        "pip",
        "--python",
        python,
        "install",
        "--no-deps",
        "-q",
        wheel,
        cwd=tmp_path,
    )

    work = tmp_path / "work"
    work.mkdir()
    shutil.copy(ROOT / "pipelines" / "minimal.yaml", work)
    shutil.copytree(ROOT / "pipelines" / "minimal", work / "minimal")
    runner = python.parent / "runner"

    located = run(
        python,
        "-c",
        "import runner.resources as r; print(r.__file__); "
        "print(r.schema_path('pipeline')); print(r.templates_dir())",
        cwd=work,
    )
    venv = str(tmp_path / "venv")
    assert all(line.startswith(venv) for line in located.splitlines()), located

    assert "1 file checked: 1 valid" in run(runner, "validate", "minimal.yaml", cwd=work)
    printed = json.loads(run(runner, "schema", cwd=work))
    assert printed == json.loads((ROOT / "schemas" / "pipeline.schema.json").read_text())
