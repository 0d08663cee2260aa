"""The `python` kind: a class named `module:Class`, for what YAML cannot say.

Importing a module runs its code, so a `python` tool is imported only when the user allows it
(`--allow-python`, or `RUNNER_ALLOW_PYTHON=1`); `runner validate` never imports it, and running a
pipeline from an untrusted source without that flag stops with a clear message. The class is
constructed as `Class(config, settings)` and used as it is: the engine knows it only through the
protocols of runner/engine/protocols.py (Tool, Coordinator, ContextConsumer, …), exactly as it
knows the built-in kinds.
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from runner.config.model import PythonOptions, ToolConfig
from runner.engine.protocols import is_context_consumer, is_coordinator
from runner.tools.base import ToolBuildError, place

if TYPE_CHECKING:
    from runner.tools.services import ToolServices

ALLOW_ENV = "RUNNER_ALLOW_PYTHON"


def python_allowed(services: ToolServices) -> bool:
    return services.allow_python or os.environ.get(ALLOW_ENV, "") == "1"


def build(config: ToolConfig, services: ToolServices) -> Any:
    assert isinstance(config.options, PythonOptions)
    options = config.options
    if not python_allowed(services):
        raise ToolBuildError(
            f"{place(config)} is a python tool ({options.reference}): running it would import "
            "and run code from the pipeline's folder, which runner does only when you allow it. "
            f"If you trust this pipeline, pass --allow-python (or set {ALLOW_ENV}=1)."
        )
    cls = load_class(config, options, services)
    try:
        tool = cls(config, dict(options.settings))
    except Exception as exc:
        raise ToolBuildError(
            f"{place(config)}: {options.reference}(config, settings) failed: "
            f"{type(exc).__name__}: {exc}"
        ) from exc
    return checked(tool, config, options)


def load_class(config: ToolConfig, options: PythonOptions, services: ToolServices) -> type:
    module_name, sep, class_name = options.reference.partition(":")
    if not sep or not module_name or not class_name:
        raise ToolBuildError(
            f"{place(config)}: `class: {options.reference}` must read `module:Class`, "
            "e.g. `my_tools:InteractionTool`"
        )
    if options.path is not None:
        _put_on_sys_path(options.path, services)
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ToolBuildError(
            f"{place(config)}: cannot import module {module_name!r}: {exc}; put the module in "
            "the folder named by the tool's `path:` (relative to the pipeline file)"
        ) from exc
    cls = getattr(module, class_name, None)
    if not isinstance(cls, type):
        raise ToolBuildError(
            f"{place(config)}: module {module_name!r} ({module.__file__}) has no class "
            f"{class_name!r}; fix `class:`"
        )
    return cls


def _put_on_sys_path(path: Path, services: ToolServices) -> None:
    folder = path if path.is_absolute() else services.pipeline.folder / path
    entry = str(folder.resolve())
    if entry not in sys.path:
        sys.path.insert(0, entry)


def checked(tool: Any, config: ToolConfig, options: PythonOptions) -> Any:
    """The plugin as the engine will see it: it has an entry point and carries its tool's name."""
    if not callable(getattr(tool, "execute", None)) and not is_context_consumer(tool):
        raise ToolBuildError(
            f"{place(config)}: {options.reference} has neither execute(text, env) nor "
            "execute_with_prior_context(text, prior_context, env); implement one (docs/plugins.md)"
        )
    if config.consumes_context and not is_context_consumer(tool):
        # C20c: a consumer is always run with the buffer, so one that cannot take it would
        # run without what it declared it needs; refuse it now, before any round runs
        raise ToolBuildError(
            f"{place(config)} declares `consumes_context: true`, but its class "
            f"{options.reference} has no method execute_with_prior_context(text, prior_context, "
            "env), which the orchestrator calls with the context buffer (C20c): implement it, "
            "or remove `consumes_context: true`"
        )
    if _activated_after_subtasks(tool) and not is_context_consumer(tool):
        # C20e makes it a consumer on the task it decomposed: the same refusal (C20c)
        raise ToolBuildError(
            f"{place(config)}: its class {options.reference} sets `activate_after_subtasks = "
            "True`, so it runs on the task it decomposed with its subtasks' results (C20e), "
            "but it has no method execute_with_prior_context(text, prior_context, env), which "
            "the orchestrator calls with the context buffer (C20c): implement it, or set "
            "`activate_after_subtasks = False`"
        )
    # The name is the tool's identity in completion keys and the trace: the YAML's, always.
    if getattr(tool, "name", config.name) != config.name:
        raise ToolBuildError(
            f"{place(config)}: {options.reference} names itself {tool.name!r}, but the pipeline "
            f"calls it {config.name!r}; set `self.name = config.name` in its constructor"
        )
    tool.name = config.name
    if getattr(tool, "config", None) is None:
        tool.config = config
    return tool


def _activated_after_subtasks(tool: Any) -> bool:
    return is_coordinator(tool) and bool(getattr(tool, "activate_after_subtasks", False))
