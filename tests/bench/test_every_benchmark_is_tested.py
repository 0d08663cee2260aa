"""Every benchmark `make bench` runs has a smoke test here that imports it (and, where it can
run without the large corpora and models, runs it at a tiny size), so that a benchmark broken
between two `make bench` runs fails `make test` (bench.retrieval once failed at HEAD, unseen)."""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import pytest

import bench.__main__ as bench_main
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


def test_every_section_of_the_readme_is_written_by_a_benchmark_make_bench_runs() -> None:
    """`make bench` regenerates every figure of bench/README.md (issue 33, point 6): each section
    but the summary (bench.summary, run last) is titled in a benchmark `python -m bench` runs."""
    bench = Path(bench_main.__file__).parent
    titles = re.findall(r"^## (.+)$", (bench / "README.md").read_text(encoding="utf-8"), re.M)
    sources = {name: (bench / f"{name}.py").read_text(encoding="utf-8") for name in BENCHMARKS}
    orphans = [
        title
        for title in titles
        if title != "Summary" and not any(title in source for source in sources.values())
    ]
    assert titles and orphans == []


def test_a_section_written_under_an_option_is_run_after_its_benchmark(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[tuple[str, str, tuple[object, ...]]] = []

    def module(name: str) -> SimpleNamespace:
        def record(function: str) -> Callable[..., None]:
            return lambda *arguments: calls.append((name, function, arguments))

        return SimpleNamespace(main=record("main"), queries_main=record("queries_main"))

    monkeypatch.setattr(bench_main.importlib, "import_module", module)
    bench_main.main(["startup", "vector_search"])
    assert calls == [
        ("bench.startup", "main", ()),
        ("bench.startup", "main", (["--question", "after"],)),
        ("bench.vector_search", "main", ()),
        ("bench.vector_search", "queries_main", ("after",)),
        ("bench.summary", "main", ()),
    ]


def test_make_bench_runs_streaming_on_smollm2_too(monkeypatch: pytest.MonkeyPatch) -> None:
    # its README section and summary row show SmolLM2-135M's figures: without the option they
    # are skipped, and the row goes stale
    calls: list[tuple[object, ...]] = []
    recorder = SimpleNamespace(main=lambda *arguments: calls.append(arguments))
    monkeypatch.setattr(bench_main.importlib, "import_module", lambda _name: recorder)
    bench_main.main(["streaming"])
    assert calls[0] == (["--smollm2"],)


@pytest.mark.parametrize("name", list(bench_main.ALSO))
def test_every_function_run_under_an_option_exists(name: str) -> None:
    module = importlib.import_module(f"bench.{name}")
    for function, _arguments in bench_main.ALSO[name]:
        assert callable(getattr(module, function, None)), f"bench.{name}.{function}"


def test_the_names_python_m_bench_was_given_are_not_a_benchmark_s_own_options(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # `python -m bench serve answers` once ended in bench.answers reading "serve" as a set
    import bench.answers as answers

    measured: list[list[str]] = []
    monkeypatch.setattr(answers, "run", lambda names, base, before: measured.append(names) or {})
    monkeypatch.setattr(answers, "write_results", lambda *_: None)
    monkeypatch.setattr(answers, "write_section", lambda *_: None)
    monkeypatch.setattr(answers, "readme_section", lambda _: "")
    monkeypatch.setattr("sys.argv", ["bench", "serve", "answers"])
    answers.main()
    assert measured == [list(answers.SETS)]
