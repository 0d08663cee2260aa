"""The `python` kind: imported only when allowed, constructed as Class(config, settings)."""

from __future__ import annotations

import sys
import textwrap
import uuid
from pathlib import Path

import pytest

from runner.config.model import Decompose, PythonOptions, ToolConfig, ToolKind
from runner.engine.protocols import is_context_consumer, is_coordinator
from runner.engine.results import ResultKind
from runner.tools.base import ToolBuildError

from .conftest import run, task

PLUGIN = """
from runner.engine.results import ToolResult

class Echo:
    def __init__(self, config, settings):
        self.name = config.name
        self.config = config
        self.prefix = settings.get("prefix", "")

    def execute(self, text, env):
        return ToolResult.context(self.prefix + text)

class Splitter:
    activate_after_subtasks = False

    def __init__(self, config, settings):
        self.config = config

    def execute(self, text, env):
        return ToolResult.context("")

    def decompose(self, task, env):
        return task

class Nameless:
    def __init__(self, config, settings):
        self.name = "other"

    def execute(self, text, env):
        return ToolResult.context("")

class Reader:
    def __init__(self, config, settings):
        self.config = config

    def execute(self, text, env):
        return ToolResult.context(text)

    def execute_with_prior_context(self, text, prior_context, env):
        return ToolResult.context(f"{text} after {len(prior_context)} entries")

class Inert:
    def __init__(self, config, settings):
        pass

class Composer(Splitter):
    activate_after_subtasks = True

class ReadingComposer(Composer, Reader):
    pass
"""


@pytest.fixture
def plugin(tmp_path: Path):
    """A plugin module in a `plugins/` folder beside the pipeline, under a unique name."""
    module = f"plugin_{uuid.uuid4().hex}"
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / f"{module}.py").write_text(textwrap.dedent(PLUGIN), encoding="utf-8")
    yield module
    sys.modules.pop(module, None)
    entry = str(folder.resolve())
    if entry in sys.path:
        sys.path.remove(entry)


def python_tool(reference: str, **fields) -> ToolConfig:
    options = PythonOptions(reference=reference, settings={"prefix": "> "}, path=Path("plugins"))
    return ToolConfig(name="echo", kind=ToolKind.PYTHON, options=options, **fields)


def test_a_python_tool_is_not_imported_unless_allowed(harness, plugin, monkeypatch):
    monkeypatch.delenv("RUNNER_ALLOW_PYTHON", raising=False)
    with pytest.raises(ToolBuildError, match=r"tool .echo. is a python tool .*--allow-python"):
        harness(python_tool(f"{plugin}:Echo"))
    assert plugin not in sys.modules


def test_the_environment_variable_allows_python_tools(harness, plugin, monkeypatch):
    monkeypatch.setenv("RUNNER_ALLOW_PYTHON", "1")
    assert harness(python_tool(f"{plugin}:Echo")).tools["echo"].prefix == "> "


def test_the_class_is_built_with_config_and_settings_and_used_as_is(harness, plugin):
    h = harness(python_tool(f"{plugin}:Echo"), allow_python=True)
    tool = h.tools["echo"]
    assert type(tool).__name__ == "Echo"
    assert tool.config.name == "echo"
    result = run(tool.execute("hi", h.env(task("hi"))))
    assert (result.kind, result.text) == (ResultKind.CONTEXT, "> hi")


def test_a_python_coordinator_is_a_coordinator_to_the_engine(harness, plugin):
    h = harness(python_tool(f"{plugin}:Splitter"), allow_python=True)
    tool = h.tools["echo"]
    assert is_coordinator(tool)
    assert not is_context_consumer(tool)
    assert tool.name == "echo"


def test_a_python_coordinator_cannot_also_have_a_decompose_block(harness, plugin):
    with pytest.raises(ToolBuildError, match="coordinator already"):
        harness(python_tool(f"{plugin}:Splitter", decompose=Decompose()), allow_python=True)


@pytest.mark.parametrize(
    ("reference", "message"),
    [
        ("no_colon", "must read `module:Class`"),
        ("no_such_module_xyz:Echo", "cannot import module 'no_such_module_xyz'"),
        ("{plugin}:Missing", "has no class 'Missing'"),
        ("{plugin}:Inert", "has neither execute"),
        ("{plugin}:Nameless", "names itself 'other'"),
    ],
)
def test_a_broken_python_tool_fails_the_build_clearly(harness, plugin, reference, message):
    with pytest.raises(ToolBuildError, match=message):
        harness(python_tool(reference.format(plugin=plugin)), allow_python=True)


def test_c20c_a_declared_consumer_without_execute_with_prior_context_fails_when_loaded(
    harness, plugin
):
    with pytest.raises(ToolBuildError) as raised:
        harness(python_tool(f"{plugin}:Echo", consumes_context=True), allow_python=True)
    message = str(raised.value)
    assert "tool 'echo' declares `consumes_context: true`" in message
    assert f"its class {plugin}:Echo has no method execute_with_prior_context(" in message
    assert "remove `consumes_context: true`" in message


def test_c20c_a_declared_consumer_with_the_method_is_a_context_consumer(harness, plugin):
    h = harness(python_tool(f"{plugin}:Reader", consumes_context=True), allow_python=True)
    assert is_context_consumer(h.tools["echo"])


def test_c20c_a_python_coordinator_activated_after_subtasks_without_the_method_fails_when_loaded(
    harness, plugin
):
    with pytest.raises(ToolBuildError) as raised:
        harness(python_tool(f"{plugin}:Composer"), allow_python=True)
    message = str(raised.value)
    assert f"its class {plugin}:Composer sets `activate_after_subtasks = True`" in message
    assert "has no method execute_with_prior_context(" in message
    assert "or set `activate_after_subtasks = False`" in message


def test_c20e_a_python_coordinator_activated_after_subtasks_with_the_method_loads(harness, plugin):
    h = harness(python_tool(f"{plugin}:ReadingComposer"), allow_python=True)
    tool = h.tools["echo"]
    assert is_coordinator(tool) and is_context_consumer(tool)


def test_c20c_the_pipeline_does_not_open_with_a_consumer_that_cannot_take_the_buffer(
    tmp_path, plugin
):
    from runner.app import Runtime

    pipeline = tmp_path / "shop.yaml"
    pipeline.write_text(
        "domain: shop\ntools:\n  - name: reader\n    kind: python\n"
        f"    class: {plugin}:Echo\n    path: plugins\n    consumes_context: true\n",
        encoding="utf-8",
    )
    with pytest.raises(ToolBuildError, match=r"shop.yaml:3:5: tool 'reader' declares"):
        Runtime.open(pipeline, allow_python=True)
