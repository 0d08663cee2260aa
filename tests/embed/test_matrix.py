"""The configuration matrix (tests/matrix/cases.py) on the real model, all-MiniLM-L6-v2: every
documented configuration asked real questions through `runner run`, the recommended ones
through `runner eval` and `runner serve` too (`make test-embed`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.matrix.cases import *  # noqa: F403 (the matrix's tests and fixtures)


@pytest.fixture(scope="module")
def meaning(embedder: Any) -> Iterator[str]:
    yield embedder.name
