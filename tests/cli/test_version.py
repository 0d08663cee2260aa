"""`runner --version`: the version and which extras are installed (issue 32.6: the docs said
nowhere how to see them)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from runner.cli import extras as extras_module
from runner.cli import main


def test_version_lists_every_extra_but_dev() -> None:
    output = CliRunner().invoke(main, ["--version"]).output
    assert output.startswith("runner, version ")
    listed = {line.split()[0] for line in output.splitlines()[2:]}
    assert {"embed", "serve", "otel", "mcp", "ray"} <= listed
    assert "dev" not in listed


def test_an_installed_extra_says_so() -> None:
    # the test environment has the `embed` extra (numpy, onnxruntime, …)
    assert "  embed       installed" in CliRunner().invoke(main, ["--version"]).output


def test_a_missing_extra_names_what_it_lacks_and_how_to_add_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(extras_module, "_installed", lambda package: package != "onnxruntime")
    output = CliRunner().invoke(main, ["--version"]).output
    assert "  embed       not installed (lacks onnxruntime): pip install 'runner[embed]'" in output
