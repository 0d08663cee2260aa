"""A pipeline's lookup tables: where each table file is."""

from __future__ import annotations

from pathlib import Path

from runner.config.model import Pipeline


def table_path(pipeline: Pipeline, table: Path) -> Path:
    """A table path as written in the pipeline is relative to the pipeline's folder."""
    return table if table.is_absolute() else pipeline.folder / table
