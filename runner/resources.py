"""Where the shipped JSON Schemas and default templates are.

At runner's top as a leaf: config, the LLM layer and the faces all find shipped files here.

In a checkout they are the repository's top-level `schemas/` and `templates/`; in an installed
wheel they are packed as `runner/_data/…` (see pyproject.toml). Nothing else should guess paths.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent


@cache
def _data_dir(name: str) -> Path:
    for candidate in (_PACKAGE / "_data" / name, _PACKAGE.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(
        f"runner's {name}/ folder is missing: reinstall runner (looked in {_PACKAGE / '_data'} "
        f"and {_PACKAGE.parent})"
    )


def schema_path(name: str) -> Path:
    """A JSON Schema by file stem: `schema_path("pipeline")`."""
    return _data_dir("schemas") / f"{name}.schema.json"


def templates_dir() -> Path:
    return _data_dir("templates")
