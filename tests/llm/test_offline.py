"""The offline provider's heuristics (docs/offline.md), through the real Prompts and client."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from runner.config.model import Activation, ActivationMode, PromptType, PromptTypes
from runner.llm.prompts import Passage
from runner.llm.types import Purpose
from runner.sources import Source

from .helpers import lookup_tool, offline, pipeline, run, tool

PRODUCTS = {
    "type": "object",
    "properties": {"products": {"type": "array", "items": {"type": "string"}}},
}
MANUAL = Passage(
    "# Battery\nThe XR-200 battery lasts 10 hours. It charges fully in 2 hours.\nThe case is blue.",
    (Source("manual.md", 3),),
)
POLICY = Passage("Every product has a two-year warranty.", (Source("policy.md", 1),))


def test_suitability_says_yes_when_the_task_shares_words_with_the_instruction() -> None:
    _, prompts = offline()
    tools = [
        tool("warranty", "Does the user ask about warranty or returns?"),
        tool("recipes", "Is this a request for a cooking recipe?"),
    ]
    chosen = run(prompts.suitability("What does the warranty cover for returns?", tools))
    assert chosen == {"warranty": True, "recipes": False}


def test_suitability_reads_examples_and_keywords() -> None:
    _, prompts = offline()
    tools = [
        tool("compat", examples=("Can I pair the XR-200 with the HX-10 dock?",)),
        tool(
            "shipping",
            activation=Activation(ActivationMode.RULE, keywords=("delivery", "courier")),
        ),
    ]
    assert run(prompts.suitability("Which dock can I pair with my speaker?", tools)) == {
        "compat": True,
        "shipping": False,
    }
    assert run(prompts.suitability("When will the courier come?", tools))["shipping"] is True


def test_suitability_ignores_model_numbers_in_examples() -> None:
    _, prompts = offline()
    tools = [
        tool(
            "compat",
            "Do two products work together?",
            examples=("Is the XR-200 compatible with the HX-10?",),
        )
    ]
    assert run(prompts.suitability("How heavy is the XR-200 speaker itself?", tools)) == {
        "compat": False
    }


def test_suitability_is_one_call_for_all_candidates(tmp_path: Path) -> None:
    client, prompts = offline()
    run(prompts.suitability("anything at all", [tool("a", "x?"), tool("b", "y?"), tool("c")]))
    assert [call.purpose for call in client.calls] == ["suitability"]


def test_prompt_type_follows_the_descriptions_and_keywords() -> None:
    _, prompts = offline()
    types = [
        PromptType("question", "a question about products"),
        PromptType("smalltalk", "greetings and thanks", keywords=("hello", "hi")),
    ]
    assert run(prompts.prompt_type("hello, nice day!", types)) == "smalltalk"


def test_prompt_type_falls_back_to_the_pipelines_default(tmp_path: Path) -> None:
    base = pipeline(tmp_path)
    configured = type(base)(**{**base.__dict__, "prompt_types": PromptTypes(default="other")})
    _, prompts = offline(configured)
    types = [PromptType("question", "products"), PromptType("other", "anything else")]
    assert run(prompts.prompt_type("zebra giraffe", types)) == "other"


def test_extract_prefers_known_table_values_in_their_own_spelling(tmp_path: Path) -> None:
    table = tmp_path / "products.csv"
    table.write_text("model,name\nXR-200,Speaker\nHX-10,Dock\nZZ-9,Other\n", encoding="utf-8")
    _, prompts = offline(
        pipeline(tmp_path, lookup_tool(table, "model", match="params", parameter="products"))
    )
    params = run(
        prompts.extract(
            Purpose.DECOMPOSE, "Does the xr200 work with an hx-10?", PRODUCTS, tool="compat"
        )
    )
    assert params == {"products": ["XR-200", "HX-10"]}


def test_extract_finds_quotes_names_numbers_and_enums() -> None:
    _, prompts = offline()
    schema = {
        "type": "object",
        "properties": {
            "items": {"type": "array", "items": {"type": "string"}},
            "budget": {"type": "number"},
            "quantity": {"type": "integer"},
            "color": {"type": "string", "enum": ["red", "blue"]},
        },
    }
    text = 'Compare the Aurora Lamp and "Night Owl" in blue, under 49.5 euros.'
    params = run(prompts.extract(Purpose.EXTRACT, text, schema, tool="shop"))
    # 49.5 is no integer, so `quantity` stays out rather than being made up
    assert params == {"items": ["Aurora Lamp", "Night Owl"], "budget": 49.5, "color": "blue"}


def test_extract_leaves_out_what_the_text_does_not_give() -> None:
    _, prompts = offline()
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string"}, "tags": {"type": "array"}},
        "required": ["city"],
    }
    assert run(prompts.extract(Purpose.EXTRACT, "what is it like there", schema, tool="t")) == {
        "tags": []
    }


def test_gatekeeper_is_satisfied_when_the_context_covers_the_question() -> None:
    _, prompts = offline()
    enough, reason = run(
        prompts.gatekeeper("How many hours does the XR-200 battery last?", [MANUAL])
    )
    assert enough is True
    assert "covers 4 of 4" in reason


def test_gatekeeper_names_the_words_the_context_lacks() -> None:
    _, prompts = offline()
    enough, reason = run(prompts.gatekeeper("What is the XR-200 price in euros?", [MANUAL]))
    assert enough is False
    assert reason.endswith("not covered: price, euros")


def test_missing_info_queries_are_the_uncovered_words_within_the_limit() -> None:
    _, prompts = offline()
    question = "XR-200 price, weight, colour options, charger voltage and shipping cost?"
    queries = run(prompts.missing_info(question, [MANUAL], max_missing=2))
    assert len(queries) == 2
    words = " ".join(queries).split()
    assert "price" in words and "cost" in words and "xr-200" not in words


def test_read_page_quotes_the_best_sentences_of_a_page_that_answers() -> None:
    _, prompts = offline()
    answer = run(prompts.read_page("How long does the battery last?", MANUAL, tool="search"))
    assert answer == "The XR-200 battery lasts 10 hours."


def test_read_page_is_none_when_the_page_does_not_answer() -> None:
    _, prompts = offline()
    assert run(prompts.read_page("What colour is the charging cable?", POLICY, tool="s")) is None


def test_answer_puts_guaranteed_context_first_and_cites_sources() -> None:
    _, prompts = offline()
    guaranteed = Passage("XR-200 battery: 10 h.", (Source("products.csv"),), guaranteed=True)
    answer = run(
        prompts.answer(
            "How long does the XR-200 battery last, and the warranty?",
            [guaranteed],
            [POLICY, MANUAL],
        )
    ).text
    assert answer.splitlines() == [
        "XR-200 battery: 10 h. [products.csv]",
        "Every product has a two-year warranty. [policy.md p. 1]",
        "The XR-200 battery lasts 10 hours. [manual.md p. 3]",
    ]


def test_answer_says_so_when_nothing_matches() -> None:
    _, prompts = offline()
    answer = run(prompts.answer("Who painted the ceiling?", [], [POLICY])).text
    # it says so, and names where it looked: the closest sections by document and heading
    assert answer == (
        "The available context does not answer this question. The closest sections: policy.md."
    )


def test_compose_keeps_every_page_answer_with_its_source() -> None:
    # page answers come back as guaranteed context (C32): the pages were read, so each is kept
    _, prompts = offline()
    answers = [replace(MANUAL, guaranteed=True), replace(POLICY, guaranteed=True)]
    answer = run(prompts.compose("battery hours", answers, tool="deep")).text
    assert "[manual.md p. 3]" in answer and "[policy.md p. 1]" in answer


def test_compose_quotes_only_the_relevant_pages_handed_over_unread() -> None:
    # pages a search returned without reading them (C31) compete like an answer's context
    _, prompts = offline()
    composed = run(prompts.compose("battery hours", [MANUAL, POLICY], tool="deep"))
    assert "[manual.md p. 3]" in composed.text and "policy.md" not in composed.text
    assert composed.used == (MANUAL,)


def test_a_prompt_tool_answers_from_its_context() -> None:
    _, prompts = offline()
    facts = {"task": "Is the warranty two years?"}
    context = [Passage("Warranty: two years. Shipping: free.", (Source("p.md"),))]
    reply = run(
        prompts.tool(lambda _: "…rendered…", facts, context, tool="t", subject=facts["task"])
    )
    assert reply.text == "Warranty: two years. [p.md]"


def test_a_prompt_tool_whose_context_does_not_answer_names_the_closest_sections() -> None:
    _, prompts = offline()
    facts = {"task": "Who painted the ceiling?"}
    context = [Passage("Warranty: two years.", (Source("p.md", 2, "Policy", "Warranty"),))]
    reply = run(
        prompts.tool(lambda _: "…rendered…", facts, context, tool="t", subject=facts["task"])
    )
    assert reply.text == (
        "The available context does not answer this question. "
        "The closest sections: “Warranty” in p.md."
    )


def test_offline_answers_are_deterministic() -> None:
    _, prompts = offline()
    question = "What does the XR-200 charge in, and how long is the warranty?"
    first = run(prompts.answer(question, [], [MANUAL, POLICY]))
    assert all(run(prompts.answer(question, [], [MANUAL, POLICY])) == first for _ in range(3))


KETTLE = Passage(
    "The kettle has a blue light. Clean the kettle with a cloth.\n"
    "Descale the kettle every month:\n1. Fill it with vinegar.\n2. Boil it.\n3. Rinse it.\n"
    "The kettle base is round.",
    (Source("kettle.md", 2),),
)


def test_sentences_that_only_share_the_subject_do_not_answer() -> None:
    _, prompts = offline()
    answer = run(prompts.answer("What is the capacity of the kettle?", [], [KETTLE])).text
    assert answer.startswith("The available context does not answer this question.")
    assert "blue light" not in answer and "kettle.md" in answer


def test_a_chosen_sentence_brings_the_steps_that_follow_it() -> None:
    _, prompts = offline()
    answer = run(prompts.answer("How do I descale the kettle?", [], [KETTLE])).text
    assert answer == (
        "Descale the kettle every month: 1. Fill it with vinegar. 2. Boil it. 3. Rinse it. "
        "[kettle.md p. 2]"
    )


def test_each_part_of_a_question_gets_its_sentence() -> None:
    _, prompts = offline()
    answer = run(
        prompts.answer("Which colour is the light, and what shape is the base?", [], [KETTLE])
    ).text
    assert answer == "The kettle has a blue light. The kettle base is round. [kettle.md p. 2]"
