"""The `lookup` kind: key matching, rows as context, clarification, direct calls (C26)."""

from __future__ import annotations

from pathlib import Path

import pytest

from runner.config.model import (
    Clarify,
    LookupOptions,
    Output,
    PromptOptions,
    TemplateRef,
    ToolConfig,
    ToolKind,
)
from runner.engine.results import Clarification, ResultKind
from runner.llm.types import Purpose
from runner.sources import Source
from runner.tools.base import ToolBuildError

from .conftest import run, task

PRODUCTS = """model,name,price_eur
KD-460,Kestrel 460 Dishwasher,549
KD-460i,Kestrel 460i Integrated Dishwasher,629
KW-620,Kestrel 620 Washing Machine,449
"""


@pytest.fixture
def table(tmp_path: Path) -> Path:
    path = tmp_path / "products.csv"
    path.write_text(PRODUCTS, encoding="utf-8")
    return path


def lookup_tool(name: str = "products", **option_fields) -> ToolConfig:
    fields = {
        k: option_fields.pop(k) for k in ("output", "coordinator_output") if k in option_fields
    }
    options = LookupOptions(table=Path("products.csv"), key="model", **option_fields)
    return ToolConfig(name=name, kind=ToolKind.LOOKUP, options=options, **fields)


def ask(**fields) -> Clarify:
    return Clarify(question=TemplateRef(inline="Which {{ missing[0] }} do you mean?"), **fields)


def test_text_match_is_case_insensitive_whole_token_and_longest_first(harness, table):
    h = harness(lookup_tool())
    tool = h.tools["products"]
    assert tool.find_keys("compare the kd-460i with KW-620.") == ["KD-460i", "KW-620"]
    assert tool.find_keys("is the KD-460 quiet?") == ["KD-460"]
    assert tool.find_keys("the KD-4600 and XKW-620") == []


def test_matched_rows_become_context_with_the_table_and_key_as_source(harness, table):
    h = harness(lookup_tool(columns=("model", "price_eur")))
    result = run(h.tools["products"].execute("price of KW-620?", h.env(task("price of KW-620?"))))
    assert result.kind is ResultKind.CONTEXT
    assert result.text == "model: KW-620; price_eur: 449"
    assert result.sources == (Source(document="products.csv", heading="KW-620"),)


def test_c22_on_a_subtask_only_the_directive_is_searched_for_keys(harness, table):
    h = harness(lookup_tool(columns=("model",)))
    sub = task("Specifications of KW-620", "1.1", prompt_context="Compare KD-460 and KW-620")
    env = h.env(sub)
    result = run(h.tools["products"].execute(env.text, env))
    assert result.text == "model: KW-620"


def test_no_key_and_no_clarify_gives_empty_context(harness, table):
    h = harness(lookup_tool())
    result = run(h.tools["products"].execute("hello", h.env(task("hello"))))
    assert result.kind is ResultKind.CONTEXT
    assert result.is_empty


def test_c24_no_key_with_clarify_asks_its_question(harness, table):
    h = harness(lookup_tool(clarify=ask()))
    result = run(h.tools["products"].execute("how much?", h.env(task("how much?"))))
    assert result.kind is ResultKind.CLARIFICATION
    assert result.text == "Which model do you mean?"


def test_c24_continuing_searches_the_answer_for_the_key(harness, table):
    h = harness(lookup_tool(clarify=ask(), columns=("name",)))
    clarification = Clarification("1", "products", "Which model?", answer="the kd-460i one")
    result = run(
        h.tools["products"].execute_with_clarification(
            "how much?", clarification, h.env(task("how much?"))
        )
    )
    assert result.text == "name: Kestrel 460i Integrated Dishwasher"


def test_params_match_extracts_the_parameter_and_keeps_known_keys(harness, table):
    h = harness(lookup_tool(match="params", parameter="models"))
    h.prompts.extract_replies["products"] = {"models": ["kw-620", "ZZ-1"]}
    result = run(h.tools["products"].execute("the washer", h.env(task("the washer"))))
    (call,) = h.prompts.of(Purpose.EXTRACT)
    assert call["schema"]["properties"]["models"]["type"] == "array"
    assert result.sources == (Source(document="products.csv", heading="KW-620"),)


def test_c24_with_params_the_answer_is_extracted_from_when_it_names_no_key_plainly(harness, table):
    h = harness(lookup_tool(match="params", parameter="models", clarify=ask()))
    h.prompts.extract_replies["products"] = lambda text: (
        {"models": ["KW-620"]} if "washing machine" in text else {}
    )
    clarification = Clarification("1", "products", "Which model?", answer="the washing machine")
    result = run(
        h.tools["products"].execute_with_clarification(
            "how much?", clarification, h.env(task("how much?"))
        )
    )
    assert h.prompts.of(Purpose.EXTRACT)[0]["text"] == "how much?\nthe washing machine"
    assert result.sources == (Source(document="products.csv", heading="KW-620"),)


def test_c25_lookup_may_answer_terminally(harness, table):
    h = harness(lookup_tool(output=Output.ANSWER, columns=("price_eur",)))
    result = run(h.tools["products"].execute("KW-620", h.env(task("KW-620"))))
    assert result.kind is ResultKind.TERMINAL
    assert result.text == "price_eur: 449"


def test_c26_rows_for_is_a_direct_call(harness, table):
    h = harness(lookup_tool())
    rows = h.tools["products"].rows_for("kw-620")
    assert rows == [{"model": "KW-620", "name": "Kestrel 620 Washing Machine", "price_eur": "449"}]
    rows[0]["model"] = "changed"
    assert h.tools["products"].rows_for("KW-620")[0]["model"] == "KW-620"


def test_c26_prompt_templates_call_a_lookup_directly(harness, table):
    writer = ToolConfig(
        name="writer",
        kind=ToolKind.PROMPT,
        options=PromptOptions(
            template=TemplateRef(inline="{{ lookup('demo.products', 'KW-620')[0].price_eur }}")
        ),
    )
    h = harness(lookup_tool(), writer)
    run(h.tools["writer"].execute("q", h.env(task("q"))))
    assert h.prompts.of(Purpose.TOOL)[0]["prompt"] == "449"


def test_an_unknown_key_column_fails_the_build_with_the_columns(harness, table):
    config = ToolConfig(
        name="products",
        kind=ToolKind.LOOKUP,
        options=LookupOptions(table=Path("products.csv"), key="sku"),
    )
    with pytest.raises(ToolBuildError, match=r"'sku' is not a column .*model, name, price_eur"):
        harness(config)


def test_a_missing_table_fails_the_build_naming_the_file(harness):
    with pytest.raises(ToolBuildError, match=r"products.csv: table file not found"):
        harness(lookup_tool())
