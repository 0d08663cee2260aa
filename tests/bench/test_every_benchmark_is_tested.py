"""Every benchmark `make bench` runs has a smoke test here that imports it (and, where it can
run without the large corpora and models, runs it at a tiny size), so that a benchmark broken
between two `make bench` runs fails `make test` (bench.retrieval once failed at HEAD, unseen)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bench.__main__ import BENCHMARKS, ON_REQUEST

TESTS = Path(__file__).parent


@pytest.mark.parametrize("name", [*BENCHMARKS, *ON_REQUEST])
def test_the_benchmark_has_a_smoke_test_that_imports_it(name: str) -> None:
    test = TESTS / f"test_{name}.py"
    assert test.is_file(), f"bench.{name} has no tests/bench/test_{name}.py"
    imports = (
        rf"from bench import (\(\s*)?[\w, \n]*\b{name}\b|from bench\.{name} import|bench\.{name}\b"
    )
    assert re.search(imports, test.read_text(encoding="utf-8")), f"{test.name} never imports it"
