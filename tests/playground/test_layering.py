"""The playground is a face of the service: it calls the service and the application layer,
never the engine's insides or the tools, and no command module."""

from __future__ import annotations

from tests.integration.test_layering import PACKAGE, imported_runner_packages

FORBIDDEN = {"engine", "tools", "cli", "sessions"}


def test_the_playground_never_imports_the_engine_the_tools_or_the_commands() -> None:
    offending = {
        str(path.relative_to(PACKAGE.parent)): sorted(imported_runner_packages(path) & FORBIDDEN)
        for path in sorted((PACKAGE / "playground").rglob("*.py"))
        if imported_runner_packages(path) & FORBIDDEN
    }
    assert offending == {}
