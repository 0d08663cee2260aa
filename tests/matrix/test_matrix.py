"""The configuration matrix (tests/matrix/cases.py) with the stand-in embedder: page vectors
work whether or not the `embed` extra and its model are installed, so `make test` always runs
it. The real model runs the same tests in tests/embed/test_matrix.py."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.matrix.cases import *  # noqa: F403 (the matrix's tests and fixtures)
from tests.matrix.standin import standing_in


@pytest.fixture(scope="module")
def meaning() -> Iterator[str]:
    with pytest.MonkeyPatch.context() as patch, standing_in(patch):
        yield "word bag"
