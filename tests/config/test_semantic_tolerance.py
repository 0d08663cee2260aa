"""Every semantic check tolerates what an earlier check already reported (issue 11 item 4).

The pipeline schema leaves an extraction schema free (it is a JSON Schema of its own, checked by
R113), so the semantic checks are the first to meet whatever an author put there. Whatever it
is, validation reports it located and goes on: no traceback, and the checks that read the
parameters (clarification, relevance rules, subtask templates) skip a schema R113 rejected."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from runner.config import validate_file


def pipeline(schema: Any) -> dict[str, Any]:
    """A pipeline whose every reader of parameters meets `schema`."""
    return {
        "domain": "shop",
        "tools": [
            {
                "name": "warranty",
                "kind": "prompt",
                "prompt": "Warranty of {{ params.model }}",
                "parameters": {"schema": schema},
                "clarify": {"question": "Which {{ missing | join(', ') }}?", "required": ["model"]},
            },
            {
                "name": "compare",
                "kind": "prompt",
                "prompt": "Compare {{ task }}",
                "decompose": {
                    "extract": {"schema": schema},
                    "relevant_if": "params.products | length >= 2",
                    "subtasks": [
                        {"for_each": "params.products", "prompt": "Specs of {{ item }}?"},
                        {"prompt": "Price of {{ params.model }}?"},
                    ],
                },
            },
        ],
    }


SCHEMA_MUTATIONS = {
    "properties as a list": {"type": "object", "properties": [{"model": {"type": "string"}}]},
    "properties as text": {"type": "object", "properties": "model"},
    "a property as a list": {"type": "object", "properties": {"model": ["string"]}},
    "required as a number": {"type": "object", "properties": {}, "required": 3},
    "required as a mapping": {"type": "object", "required": {"model": True}},
    "required of lists": {"type": "object", "required": [["model"]]},
    "type as a list of lists": {"type": [["object"]]},
    "not an object": {"type": "array", "items": {"type": "string"}},
    "empty": {},
}


@pytest.mark.parametrize("schema", SCHEMA_MUTATIONS.values(), ids=SCHEMA_MUTATIONS.keys())
def test_a_broken_extraction_schema_is_reported_and_nothing_after_it_crashes(
    write_pipeline: Callable[..., Path], schema: Any
) -> None:
    report = validate_file(write_pipeline(yaml.safe_dump(pipeline(schema))))
    assert all(d.line >= 1 and d.col >= 1 for d in report.diagnostics)
    if schema:  # an empty schema is sound, only not `type: object`
        assert {d.code for d in report.errors} == {"R113"}


def test_properties_given_as_a_list_gives_r113_and_no_r119(
    write_pipeline: Callable[..., Path],
) -> None:
    schema = SCHEMA_MUTATIONS["properties as a list"]
    report = validate_file(write_pipeline(yaml.safe_dump(pipeline(schema))))
    assert [d.code for d in report.diagnostics] == ["R113", "R113"]  # once per tool


_keys = st.one_of(
    st.sampled_from(["type", "properties", "required", "items", "enum", "model", "products"]),
    st.integers(-2, 2),
    st.booleans(),
    st.none(),
)
_leaves = st.one_of(
    st.sampled_from(["object", "array", "string", "model", "products", ""]),
    st.integers(-3, 3),
    st.booleans(),
    st.none(),
    st.floats(allow_nan=False, allow_infinity=False, width=16),
)
_values = st.recursive(
    _leaves,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_keys, inner, max_size=4),
    max_leaves=12,
)


@settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(schema=st.dictionaries(_keys, _values, max_size=4))
def test_any_extraction_schema_gives_located_diagnostics_never_a_traceback(
    write_pipeline: Callable[..., Path], schema: Any
) -> None:
    report = validate_file(write_pipeline(yaml.safe_dump(pipeline(schema))))
    assert all(d.line >= 1 and d.col >= 1 for d in report.diagnostics)
    assert all(d.code.startswith(("R", "S")) for d in report.diagnostics)


# --- any value anywhere in a file that uses every key ----------------------------------------

EVERYTHING = Path(__file__).resolve().parents[1] / "fixtures" / "valid" / "everything.yaml"


def leaf_paths(value: Any, place: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(value, dict):
        return [p for key, item in value.items() for p in leaf_paths(item, (*place, key))]
    if isinstance(value, list):
        return [p for index, item in enumerate(value) for p in leaf_paths(item, (*place, index))]
    return [place]


def replaced(data: Any, place: tuple[Any, ...], value: Any) -> Any:
    if not place:
        return value
    head, *rest = place
    copy = dict(data) if isinstance(data, dict) else list(data)
    copy[head] = replaced(data[head], tuple(rest), value)
    return copy


@pytest.fixture(scope="module")
def everything_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """everything.yaml and its side files, in a folder the test may write to."""
    import shutil

    folder = tmp_path_factory.mktemp("everything")
    shutil.copytree(EVERYTHING.parent / "everything", folder / "everything")
    return folder


EVERYTHING_DATA = yaml.safe_load(EVERYTHING.read_text(encoding="utf-8"))
LEAVES = leaf_paths(EVERYTHING_DATA)


@settings(max_examples=150, deadline=None)
@given(
    place=st.sampled_from(LEAVES),
    value=st.one_of(
        _values,
        st.text(max_size=20),
        st.sampled_from(["x" * 300, "../outside", "/etc/*", "[", "**"]),
    ),
)
def test_any_value_at_any_place_gives_located_diagnostics_never_a_traceback(
    everything_copy: Path, place: tuple[Any, ...], value: Any
) -> None:
    path = everything_copy / "mutated.yaml"
    path.write_text(yaml.safe_dump(replaced(EVERYTHING_DATA, place, value)), encoding="utf-8")
    report = validate_file(path)
    assert all(d.line >= 1 and d.col >= 1 for d in report.diagnostics)
