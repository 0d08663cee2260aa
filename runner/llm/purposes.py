"""The variables each purpose's template receives; they live in the leaf module
runner/purposes.py, which runner.config reads too, and are re-exported here."""

from __future__ import annotations

from runner.purposes import (
    CLARIFY_VARIABLES,
    CONDITION_VARIABLES,
    DECOMPOSE_VARIABLES,
    PROMPT_TOOL_VARIABLES,
    PURPOSE_VARIABLES,
)

__all__ = [
    "CLARIFY_VARIABLES",
    "CONDITION_VARIABLES",
    "DECOMPOSE_VARIABLES",
    "PROMPT_TOOL_VARIABLES",
    "PURPOSE_VARIABLES",
]
