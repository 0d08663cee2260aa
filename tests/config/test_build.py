"""The typed model a valid file becomes: defaults, resolved paths, positions, immutability."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from runner.config import PipelineError, load_pipeline
from runner.config.model import (
    ActivationMode,
    ConditionKind,
    LookupOptions,
    Output,
    PromptOptions,
    ToolKind,
)

from .helpers import BASE, FIXTURES

EVERYTHING = FIXTURES / "valid" / "everything.yaml"


@pytest.fixture(scope="module")
def everything():  # type: ignore[no-untyped-def]
    return load_pipeline(EVERYTHING)


def test_defaults_fill_what_the_file_leaves_out(write_pipeline: Callable[..., Path]) -> None:
    pipeline = load_pipeline(write_pipeline(BASE))
    [tool] = pipeline.tools
    assert (tool.priority, tool.activation.mode, tool.output) == (
        100,
        ActivationMode.SUITABILITY,
        Output.CONTEXT,
    )
    assert [t.name for t in pipeline.prompt_types.types] == ["question"]
    assert (pipeline.limits.max_depth, pipeline.limits.max_subtasks) == (4, 12)
    assert pipeline.llm.provider == "offline"
    assert pipeline.state_folder == pipeline.folder / ".runner"


def test_the_default_prompt_type_is_the_first_declared(
    write_pipeline: Callable[..., Path],
) -> None:
    text = BASE.replace("tools:", "prompt_types:\n  types: {faq: FAQ, chat: Chat}\ntools:")
    assert load_pipeline(write_pipeline(text)).prompt_types.default == "faq"


def test_paths_resolve_against_the_pipelines_folder(everything) -> None:  # type: ignore[no-untyped-def]
    folder = EVERYTHING.parent / "everything"
    lookup = everything.find_tool("product_lookup").options
    assert isinstance(lookup, LookupOptions)
    assert lookup.table == folder / "data" / "products.csv"
    assert everything.corpora["manuals"].path == folder / "corpus" / "manuals"
    assert everything.llm.cache_path == folder / ".cache" / "llm.sqlite"
    assert everything.answer.template.path == folder / "templates" / "answer.j2"


def test_tools_and_templates_know_where_they_are(everything) -> None:  # type: ignore[no-untyped-def]
    lines = EVERYTHING.read_text().splitlines()
    compare = everything.find_tool("compare")
    assert (compare.where.line, compare.where.col) == (lines.index("  - name: compare") + 1, 5)
    options = compare.options
    assert isinstance(options, PromptOptions)
    template_line = lines.index("    template: everything/templates/compare.j2") + 1
    assert (options.template.where.line, options.template.where.col) == (template_line, 15)
    assert options.parameters.template.inline.startswith("Extract the products")


def test_decompose_becomes_subtask_templates(everything) -> None:  # type: ignore[no-untyped-def]
    decompose = everything.find_tool("compare").decompose
    specs, manual, extra = decompose.subtasks
    assert (specs.name, specs.loop_var, specs.for_each) == ("specs", "product", "params.products")
    assert specs.required_tools == ("product_lookup",)
    assert manual.condition.kind is ConditionKind.SKIP_IF_FOUND
    assert manual.condition.sibling == "specs"
    assert extra.condition.kind is ConditionKind.EXPRESSION
    assert extra.loop_var == "item"
    assert decompose.activate_after_subtasks is True


def test_c15_find_tool_takes_both_names(everything) -> None:  # type: ignore[no-untyped-def]
    assert everything.find_tool("shop.manual_neighbors") is everything.find_tool("manual_neighbors")


def test_inline_scripted_rules_keep_their_place(everything) -> None:  # type: ignore[no-untyped-def]
    rules = everything.llm.script
    assert [rule.purpose for rule in rules] == ["suitability", "answer"]
    assert (rules[1].tool, rules[1].times) == ("shop.compare", 1)
    assert rules[0].reply == {"compare": True}
    assert (
        rules[0].where.line
        == EVERYTHING.read_text().splitlines().index("    - purpose: suitability") + 1
    )
    # the script file stays a path: the LLM layer reads it (the CLI can name another one)
    assert everything.llm.script_file == EVERYTHING.parent / "everything" / "script.yaml"


def test_rule_activation_and_kind_options(everything) -> None:  # type: ignore[no-untyped-def]
    compare = everything.find_tool("compare")
    assert compare.activation.mode is ActivationMode.RULE
    assert compare.activation.keywords == ("compare", "versus")
    assert compare.coordinator_output is Output.GUARANTEED
    assert (
        everything.find_tool("pricing").options.reference == "everything_plugins.pricing:PriceTool"
    )
    assert everything.find_tool("deep").kind is ToolKind.DEEP_SEARCH


def test_the_model_is_immutable(everything) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(dataclasses.FrozenInstanceError):
        everything.domain = "other"  # type: ignore[misc]
    settings = everything.find_tool("pricing").options.settings
    with pytest.raises(TypeError):
        settings["currency"] = "USD"
    schema = everything.find_tool("compare").options.parameters.schema
    with pytest.raises(TypeError):
        schema["required"].append("more")
    with pytest.raises(TypeError):
        everything.corpora["other"] = None  # type: ignore[index]


def test_free_data_still_works_with_json_and_jsonschema(everything) -> None:  # type: ignore[no-untyped-def]
    schema = everything.find_tool("compare").options.parameters.schema
    assert json.loads(json.dumps(schema)) == schema
    Draft202012Validator.check_schema(schema)
    assert Draft202012Validator(schema).is_valid({"products": ["K1", "K2"]})


def test_content_hash_is_the_files_sha256(everything) -> None:  # type: ignore[no-untyped-def]
    assert everything.content_hash == hashlib.sha256(EVERYTHING.read_bytes()).hexdigest()


def test_load_pipeline_raises_with_every_diagnostic() -> None:
    with pytest.raises(PipelineError) as caught:
        load_pipeline(FIXTURES / "invalid" / "s101_misspelt_key.yaml")
    assert [d.code for d in caught.value.diagnostics] == ["S101"]
    assert "s101_misspelt_key.yaml:7:5" in str(caught.value)


def test_warnings_do_not_stop_loading() -> None:
    pipeline = load_pipeline(FIXTURES / "invalid" / "r104_coordinator_only_never_required.yaml")
    assert pipeline.tools[0].activation.mode is ActivationMode.COORDINATOR_ONLY
