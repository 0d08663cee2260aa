"""Which template writes a purpose's prompt, and its rendering: a tool's own (`template` /
`prompt`), else the pipeline's `llm.templates`, else runner's default in templates/; each file
read once per pipeline, a render that fails named by its template and what it receives."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jinja2 import TemplateError

from runner.config.model import Pipeline, TemplateRef
from runner.llm.errors import LLMConfigError
from runner.llm.purposes import PURPOSE_VARIABLES
from runner.llm.types import Purpose
from runner.resources import templates_dir
from runner.templating import environment as templates

__all__ = ["PromptTemplateError", "PromptTemplates", "default_template"]


class PromptTemplateError(LLMConfigError):
    """A purpose's template failed to render."""


def default_template(purpose: Purpose) -> Path:
    """runner's own template for a purpose (every purpose but `tool`, which has none)."""
    return templates_dir() / f"{purpose.value}.j2"


class PromptTemplates:
    """The prompt templates of one pipeline (None: runner's defaults alone)."""

    def __init__(self, pipeline: Pipeline | None = None) -> None:
        self.pipeline = pipeline
        self._sources: dict[Path, str] = {}

    def render(
        self, purpose: Purpose, variables: Mapping[str, Any], template: TemplateRef | None = None
    ) -> str:
        source, name = self._template(purpose, template)
        try:
            return templates.render(source, variables)
        except TemplateError as error:
            expected = ", ".join(sorted(PURPOSE_VARIABLES[purpose]))
            raise PromptTemplateError(
                f"{name}: the {purpose.value} template failed to render: {error}. "
                f"It receives: {expected}"
            ) from None

    def _template(self, purpose: Purpose, template: TemplateRef | None) -> tuple[str, str]:
        configured = self.pipeline.llm.templates.get(purpose.value) if self.pipeline else None
        chosen = template or configured
        if chosen is not None:
            if chosen.inline is not None:
                return chosen.inline, f"{chosen.where or 'inline template'}"
            assert chosen.path is not None
            return self._read(chosen.path), str(chosen.path)
        path = default_template(purpose)
        return self._read(path), str(path)

    def _read(self, path: Path) -> str:
        if path not in self._sources:
            try:
                self._sources[path] = path.read_text(encoding="utf-8")
            except OSError as error:
                raise PromptTemplateError(f"{path}: cannot read template ({error})") from None
        return self._sources[path]
