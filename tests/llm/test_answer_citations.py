"""C33 in the LLM layer: the answer template numbers its passages, the reply cites them as `[n]`,
and `Prompts.answer` rewrites the markers as runner's citations and says which passages the
answer drew on — for every provider alike."""

from __future__ import annotations

from runner.config.model import ScriptRule
from runner.llm.citations import CITATION, citation_labels, source_labels
from runner.llm.prompts import Answer, Passage, Prompts
from runner.sources import Source

from .helpers import Recorder, offline, run, scripted

PAGE_A = Passage("The kettle is blue.", (Source("a.md", 1),), "1:rag")
PAGE_B = Passage("The kettle holds a litre.", (Source("b.md", 2),), "1:rag")
PAGE_C = Passage("The kettle boils in three minutes.", (Source("c.md", 3),), "1:rag")
WARRANTY = Passage(
    "Two years of warranty.", (Source("products.csv", heading="KD-450"),), "1:w", True
)


def answer_with(reply: str, guaranteed=(), context=(PAGE_A, PAGE_B, PAGE_C)) -> Answer:
    """The answer when the model replies `reply` (the scripted provider)."""
    client = scripted(ScriptRule(reply=reply, purpose="answer"))
    return run(Prompts(client).answer("About the kettle?", list(guaranteed), list(context)))


def test_c33_markers_become_runners_citations_of_the_passages_they_name() -> None:
    reply = answer_with("It is blue [1] and holds a litre [2].")
    assert reply.text == "It is blue [a.md p. 1] and holds a litre [b.md p. 2]."
    assert reply.used == (PAGE_A, PAGE_B)


def test_c33_a_marker_naming_several_passages_cites_them_all() -> None:
    reply = answer_with("Blue and fast [1, 3].")
    assert reply.text == "Blue and fast [a.md p. 1; c.md p. 3]."
    assert reply.used == (PAGE_A, PAGE_C)


def test_c33_adjacent_markers_become_one_citation() -> None:
    reply = answer_with("Blue and fast [1][3].")
    assert reply.text == "Blue and fast [a.md p. 1; c.md p. 3]."
    assert reply.used == (PAGE_A, PAGE_C)


def test_c33_used_passages_follow_the_order_of_their_first_citation_once_each() -> None:
    reply = answer_with("Fast [3]. Blue [1]. Fast again [3].")
    assert reply.used == (PAGE_C, PAGE_A)


def test_c33_a_marker_naming_no_passage_is_dropped() -> None:
    reply = answer_with("It is blue [7]. It holds a litre [2]. Zero [0].")
    assert reply.text == "It is blue. It holds a litre [b.md p. 2]. Zero."
    assert reply.used == (PAGE_B,)


def test_c33_a_reply_without_markers_drew_on_every_passage() -> None:
    reply = answer_with("It is a blue kettle.", guaranteed=(WARRANTY,))
    assert reply.text == "It is a blue kettle."
    assert reply.used == (WARRANTY, PAGE_A, PAGE_B, PAGE_C)


def test_c33_a_reply_whose_markers_all_name_nothing_drew_on_every_passage() -> None:
    assert answer_with("Blue [9].").used == (PAGE_A, PAGE_B, PAGE_C)


def test_c33_guaranteed_passages_are_numbered_before_the_context() -> None:
    reply = answer_with("Two years [1]; blue [2].", guaranteed=(WARRANTY,))
    assert reply.text == "Two years [products.csv]; blue [a.md p. 1]."
    assert reply.used == (WARRANTY, PAGE_A)


def test_c33_a_cited_passage_without_sources_is_used_and_its_marker_dropped() -> None:
    bare = Passage("Two years.", (), "1:w", True)
    reply = answer_with("Two years [1]. Blue [2].", guaranteed=(bare,))
    assert reply.text == "Two years. Blue [a.md p. 1]."
    assert reply.used == (bare, PAGE_A)


def test_c33_a_citation_already_in_runners_format_counts_for_its_passage() -> None:
    reply = answer_with("It holds a litre [b.md p. 2].")
    assert reply.text == "It holds a litre [b.md p. 2]."
    assert reply.used == (PAGE_B,)


def test_c33_brackets_in_code_and_links_are_not_markers() -> None:
    text = "Use `s[1]` or s[2] and see [1](https://example.org) or [2]_."
    reply = answer_with(text)
    assert reply.text == text
    assert reply.used == (PAGE_A, PAGE_B, PAGE_C)  # it cites nothing: it drew on all


def test_c33_retrieved_pages_in_one_passage_are_numbered_one_by_one() -> None:
    pages = Passage(
        "[a.md, page 1] Colour\nThe kettle is blue.\n\n[c.md, page 3] Speed\nIt boils fast.",
        (Source("a.md", 1), Source("c.md", 3)),
        "1:rag",
    )
    recorder = Recorder(scripted(ScriptRule(reply="Fast [2].", purpose="answer")))
    reply = run(Prompts(recorder).answer("How fast?", [], [pages]))
    assert reply.text == "Fast [c.md p. 3]."
    assert [p.sources for p in reply.used] == [(Source("c.md", 3),)]
    [(request, _)] = recorder.seen
    assert [(p["number"], p["sources"][0]["document"]) for p in request.facts["context"]] == [
        (1, "a.md"),
        (2, "c.md"),
    ]
    assert "[1]\n[a.md, page 1] Colour" in request.prompt
    assert "[2]\n[c.md, page 3] Speed" in request.prompt


def test_c33_a_passage_whose_text_is_not_a_list_of_its_pages_stays_whole() -> None:
    joined = Passage("Blue and fast.", (Source("a.md", 1), Source("c.md", 3)), "1:tool")
    reply = answer_with("Blue and fast [1].", context=(joined,))
    assert reply.text == "Blue and fast [a.md p. 1; c.md p. 3]."
    assert reply.used == (joined,)


def test_c33_the_default_template_shows_each_passage_under_its_number() -> None:
    recorder = Recorder(scripted(ScriptRule(reply="ok", purpose="answer")))
    run(Prompts(recorder).answer("q?", [WARRANTY], [PAGE_A, PAGE_B]))
    [(request, _)] = recorder.seen
    assert [p["number"] for p in request.facts["guaranteed"]] == [1]
    assert [p["number"] for p in request.facts["context"]] == [2, 3]
    assert "[1]\nTwo years of warranty." in request.prompt
    assert "[3]\nThe kettle holds a litre." in request.prompt


# --- the offline provider cites with markers like any model -------------------------------


def cited_labels(text: str) -> set[str]:
    return {
        label for match in CITATION.finditer(text) for label in citation_labels(match["labels"])
    }


def test_c33_offline_answer_uses_exactly_the_pages_its_sentences_came_from() -> None:
    _, prompts = offline()
    pages = Passage(
        "[manual.md, page 3] Battery\nThe XR-200 battery lasts 10 hours.\n\n"
        "[privacy.md, page 12] Your rights\nYou may ask us to delete your data.",
        (Source("manual.md", 3), Source("privacy.md", 12)),
        "1:rag",
    )
    recorder = Recorder(prompts.client)
    reply = run(Prompts(recorder).answer("How long does the XR-200 battery last?", [], [pages]))
    assert recorder.seen[0][1] == "The XR-200 battery lasts 10 hours. [1]"  # it cites by number
    assert reply.text == "The XR-200 battery lasts 10 hours. [manual.md p. 3]"
    assert [p.sources for p in reply.used] == [(Source("manual.md", 3),)]


def test_c33_offline_citations_in_the_text_name_the_sources_of_the_passages_used() -> None:
    _, prompts = offline()
    reply = run(
        prompts.answer(
            "How long does the XR-200 battery last, and is the kettle blue?",
            [WARRANTY],
            [
                Passage("The XR-200 battery lasts 10 hours.", (Source("manual.md", 3),)),
                PAGE_A,
                PAGE_B,
            ],
        )
    )
    used_labels = set(source_labels([s.to_json() for p in reply.used for s in p.sources]))
    assert (
        cited_labels(reply.text) == used_labels == {"products.csv", "manual.md p. 3", "a.md p. 1"}
    )


def test_c33_offline_keeps_a_guaranteed_answers_own_citations_and_counts_it_used() -> None:
    composed = Passage(
        "Ovens keep parts for 10 years. [parts.md p. 2]",
        (Source("parts.md", 2), Source("fees.md", 5)),
        "1:deep",
        True,
    )
    _, prompts = offline()
    reply = run(prompts.answer("How many years are oven parts kept?", [composed], [PAGE_A]))
    assert reply.text == "Ovens keep parts for 10 years. [parts.md p. 2]"
    assert reply.used == (composed,)


def test_c33_offline_comparison_of_records_cites_each_records_passage() -> None:
    rows = [
        Passage(
            f"model: {model}; price_eur: {price}; warranty_years: 2",
            (Source("products.csv", heading=model),),
            f"1.{n}:product_lookup",
        )
        for n, (model, price) in enumerate([("KD-450", 549), ("KD-600X", 799)], start=1)
    ]
    client, _ = offline()
    recorder = Recorder(client)
    question = "Which is cheaper, the KD-450 or the KD-600X?"
    reply = run(Prompts(recorder).answer(question, [], rows))
    [(_, raw)] = recorder.seen
    assert raw.splitlines() == [
        "price_eur — KD-450: 549; KD-600X: 799 [1; 2]",
        "In common: warranty_years: 2 [1; 2]",
    ]
    assert reply.text.splitlines() == [
        "price_eur — KD-450: 549; KD-600X: 799 [products.csv]",
        "In common: warranty_years: 2 [products.csv]",
    ]
    assert reply.used == tuple(rows)


def test_c33_passages_carrying_a_retrievals_evidence_can_be_cited() -> None:
    """A retrieval's passages carry the gatekeeper's evidence (a dict) in a pipeline with page
    vectors and a deep fallback; citing them crashed every such round (unhashable dict)."""
    evidence = {"first_page_cosine": 0.61, "agreement": 1.0, "top_k": 5}
    first = Passage("The kettle is blue.", (Source("a.md", 1),), "1:rag", evidence=evidence)
    second = Passage("The kettle holds a litre.", (Source("b.md", 2),), "1:rag", evidence=evidence)
    reply = answer_with("Blue [1], a litre [2], blue again [1].", context=(first, second))
    assert reply.text == "Blue [a.md p. 1], a litre [b.md p. 2], blue again [a.md p. 1]."
    assert reply.used == (first, second)


# --- what a prompt tool's reply drew on ------------------------------------------------------

# one passage of labelled pages, as a retrieval tool gives a consumer its context
PAGES = Passage(
    "[a.md, page 1]\nThe kettle is blue.\n\n[b.md, page 2]\nThe kettle holds a litre.",
    (Source("a.md", 1), Source("b.md", 2)),
    "1:rag",
)


def tool_reply(reply: str) -> Answer:
    client = scripted(ScriptRule(reply=reply, purpose="tool"))
    return run(
        Prompts(client).tool(
            lambda facts: f"Answer from: {facts['context']}",
            {},
            [PAGES],
            tool="t",
            subject="kettle",
        )
    )


def test_c33_a_tool_reply_citing_one_page_of_its_context_drew_on_that_page_alone() -> None:
    reply = tool_reply("It holds a litre. [b.md p. 2]")
    assert [passage.sources for passage in reply.used] == [(Source("b.md", 2),)]


def test_c33_a_tool_reply_citing_nothing_drew_on_all_it_was_given() -> None:
    assert tool_reply("It holds a litre.").used == (PAGES,)
