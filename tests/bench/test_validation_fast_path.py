"""The fast schema check (runner.config.fastcheck) that the start-up target needed: it must say
"valid" exactly when jsonschema finds no error, or `runner validate` would pass a broken file.
And `check_files` spreads many files over processes without changing a single diagnostic."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from runner.config import PARALLEL_FROM, check_files, find_yaml_files, validate_file
from runner.config.fastcheck import Unsupported, compile_schema
from runner.config.schema import fast_check, pipeline_validator
from runner.documents.loader import LoadError, read_document

ROOT = Path(__file__).resolve().parents[2]
YAML_FILES = find_yaml_files([ROOT / "tests" / "fixtures", ROOT / "pipelines"], lambda p: True)


def documents() -> Iterator[tuple[str, Any]]:
    for path in YAML_FILES:
        try:
            data = read_document(path).data
        except LoadError:
            continue
        yield str(path.relative_to(ROOT)), data


DOCUMENTS = dict(documents())


def jsonschema_says_valid(data: Any) -> bool:
    return next(iter(pipeline_validator().iter_errors(data)), None) is None


def test_the_pipeline_schema_compiles():
    assert fast_check() is not None


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
def test_the_fast_check_agrees_with_jsonschema_on_every_fixture(name: str):
    data = DOCUMENTS[name]
    assert fast_check()(data) is jsonschema_says_valid(data)


def _valid_documents() -> list[Any]:
    return [data for data in DOCUMENTS.values() if jsonschema_says_valid(data)]


def _paths(value: Any, at: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield at
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*at, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, (*at, index))


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-2, 20)
    | st.sampled_from([0.5, "", "x", "prompt", "retrieve", "context", "answer", "always"]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["a", "kind", "name"]), inner, max_size=3)
    ),
    max_leaves=6,
)


@st.composite
def mutated_documents(draw: st.DrawFn) -> Any:
    """A valid document with one thing changed: a value replaced (by a small JSON value, or by
    a value found elsewhere in the document, which often keeps it valid), a key dropped or
    added."""
    document = copy.deepcopy(draw(st.sampled_from(_valid_documents())))
    paths = [p for p in _paths(document) if p]
    *parents, last = draw(st.sampled_from(paths))
    holder = document
    for step in parents:
        holder = holder[step]
    change = draw(st.sampled_from(["replace", "copy", "drop", "add"]))
    if change == "replace":
        holder[last] = draw(JSON_VALUES)
    elif change == "copy":
        source: Any = document
        for step in draw(st.sampled_from(paths)):
            source = source[step]
        holder[last] = copy.deepcopy(source)
    elif change == "drop" and isinstance(holder, dict):
        del holder[last]
    elif isinstance(holder, dict):
        holder[draw(st.sampled_from(["extra", "kind", "name", "priority"]))] = draw(JSON_VALUES)
    else:
        holder.append(draw(JSON_VALUES))
    return document


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated_documents())
def test_the_fast_check_agrees_with_jsonschema_on_changed_documents(document: Any):
    assert fast_check()(document) is jsonschema_says_valid(document)


def test_a_keyword_the_fast_path_does_not_know_is_refused():
    with pytest.raises(Unsupported, match="contains"):
        compile_schema({"type": "array", "contains": {"type": "string"}})


def test_check_files_over_processes_gives_the_same_diagnostics(tmp_path: Path):
    sources = [path for path in YAML_FILES if "fixtures" in path.parts]
    files = []
    for index in range(PARALLEL_FROM + 1):
        source = sources[index % len(sources)]
        target = tmp_path / f"{index:03d}-{source.name}"
        target.write_bytes(source.read_bytes())
        files.append(target)
    one_by_one = [validate_file(path).diagnostics for path in files]
    assert [report.diagnostics for report in check_files(files)] == one_by_one
