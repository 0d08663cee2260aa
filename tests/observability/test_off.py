"""OpenTelemetry off costs nothing: only runner/observability imports it, and a round run with
no observer never does (its cost is measured by `python -m bench streaming`)."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "runner"
SHOP = Path(__file__).resolve().parents[1] / "cli" / "fixtures" / "shop"


def imports_of(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def test_only_the_observability_room_imports_opentelemetry() -> None:
    importers = sorted(
        str(path.relative_to(PACKAGE.parent))
        for path in PACKAGE.rglob("*.py")
        if any(name.split(".")[0] == "opentelemetry" for name in imports_of(path))
    )
    assert importers == [
        "runner/observability/environment.py",
        "runner/observability/otel.py",
        "runner/observability/refusals.py",
    ]


def test_a_round_with_opentelemetry_off_never_imports_it(tmp_path: Path) -> None:
    shutil.copytree(SHOP, tmp_path / "shop")
    script = f"""
import asyncio, sys
from runner.app import Runtime
from runner.cli.streamed import start_observability
from runner.sessions import open_store
start_observability()
with Runtime.open({str(tmp_path / "shop" / "shop.yaml")!r}) as runtime:
    with open_store(None, runtime.pipeline) as store:
        asyncio.run(runtime.conversation(store).say("Compare the KD-450 and the KW-620"))
print("opentelemetry" in sys.modules)
"""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
