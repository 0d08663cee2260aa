"""runner: a declarative, YAML-configured runner for LLM tool pipelines."""

from __future__ import annotations

__version__ = "0.1.0"
