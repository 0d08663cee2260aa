"""The offline provider's answer heuristics (docs/offline.md), one behaviour per test, on small
texts written here. Passages go through the real Prompts and client, as a pipeline's do."""

from __future__ import annotations

from runner.llm.prompts import Passage
from runner.sources import Source
from runner.text.words import sentences, stem

from .helpers import offline, run

NOT_FOUND = "The available context does not answer this question."


def answer(question: str, *context: Passage, guaranteed: tuple[Passage, ...] = ()) -> str:
    _, prompts = offline()
    return run(prompts.answer(question, list(guaranteed), list(context))).text


def page(text: str, document: str = "doc.md", number: int | None = 1) -> Passage:
    return Passage(text, (Source(document, number),))


def labelled(*pages: tuple[str, int, str, str]) -> Passage:
    """Several pages in one passage, as the retrieval tools hand them over: each under its
    label `[document, page N] heading`."""
    text = "\n\n".join(f"[{doc}, page {n}] {heading}\n{body}" for doc, n, heading, body in pages)
    return Passage(text, tuple(Source(doc, n) for doc, n, _, _ in pages))


# --- sentences and citations ------------------------------------------------------------------


def test_sentences_are_not_cut_after_abbreviations_decimals_or_model_numbers() -> None:
    text = (
        "See p. 5 for the KD-450. Use e.g. mild soap, i.e. no bleach. Item No. 3 costs approx. "
        "€2.50, etc. The v2.1 firmware fixes it."
    )
    assert sentences(text) == [
        "See p. 5 for the KD-450.",
        "Use e.g. mild soap, i.e. no bleach.",
        "Item No. 3 costs approx. €2.50, etc.",
        "The v2.1 firmware fixes it.",
    ]


def test_short_plurals_meet_their_singular() -> None:
    assert stem("fees") == stem("fee") and stem("days") == stem("day")


def test_a_joined_name_holds_its_parts() -> None:
    dotted = page("Use copy.deepcopy on a dict.", "a.md")
    other = page("A dict maps keys to values.", "b.md")
    assert (
        answer("How do I copy a dict?", other, dotted) == "Use copy.deepcopy on a dict. [a.md p. 1]"
    )


def test_a_citation_is_never_cut_in_two() -> None:
    text = "Parts are kept for 10 years [spare-parts.md p. 2; fees.md p. 5]. Ask us."
    assert sentences(text) == [
        "Parts are kept for 10 years [spare-parts.md p. 2; fees.md p. 5].",
        "Ask us.",
    ]


def test_each_sentence_is_cited_by_the_page_it_comes_from() -> None:
    context = labelled(
        ("fees.md", 4, "Fees", "The call-out fee is €89."),
        ("care.md", 2, "Care", "Care+ covers the call-out fee."),
    )
    lines = answer("What is the call-out fee?", context).splitlines()
    assert lines == ["The call-out fee is €89. [fees.md p. 4]"]


def test_an_answer_that_already_cites_keeps_its_citations_and_is_not_cited_again() -> None:
    # a deep search's composed answer reaches the final answer as guaranteed context (C23)
    composed = Passage(
        "Ovens keep parts for 10 years. [parts.md p. 2]\nThe no-fault-found fee is €65. "
        "[fees.md p. 5]",
        (Source("parts.md", 2), Source("fees.md", 5)),
        guaranteed=True,
    )
    reply = answer(
        "How many years are oven parts kept, and what is the fee?", guaranteed=(composed,)
    )
    assert reply.splitlines() == [
        "Ovens keep parts for 10 years. [parts.md p. 2]",
        "The no-fault-found fee is €65. [fees.md p. 5]",
    ]


def test_a_citation_lists_each_source_once_in_order() -> None:
    sources = (Source("a.md", 3), Source("b.md"), Source("a.md", 3), Source("a.md", 1))
    reply = answer("Is the kettle blue?", Passage("The kettle is blue.", sources))
    assert reply == "The kettle is blue. [a.md p. 3; b.md; a.md p. 1]"


def test_our_own_not_found_is_never_quoted_as_an_answer() -> None:
    composed = Passage(NOT_FOUND, (Source("x.md", 1),), guaranteed=True)
    reply = answer("Is the kettle blue?", page("The kettle is blue."), guaranteed=(composed,))
    assert reply == "The kettle is blue. [doc.md p. 1]"


# --- relevance ------------------------------------------------------------------------------------


def test_a_sentence_from_a_page_about_something_else_is_left_out() -> None:
    fees = page("An engineer visit on a Saturday adds a surcharge of €35.", "fees.md")
    # it holds "cost", which no other page does, but nothing else of the question
    energy = page("Example costs use an electricity price of 30 cents per kWh.", "energy.md")
    reply = answer("How much does an engineer visit cost on a Saturday?", fees, energy)
    assert reply == "An engineer visit on a Saturday adds a surcharge of €35. [fees.md p. 1]"


def test_a_long_sentence_that_mentions_everything_in_passing_loses_to_a_short_answer() -> None:
    rambling = page(
        "This guide explains descaling, cleaning, water hardness, filters, alerts, programmes, "
        "accessories, warranty, returns and how long the descaling alerts take to count down "
        "for every model we have ever sold.",
        "guide.md",
    )
    short = page("Descaling takes 40 minutes.", "manual.md")
    reply = answer("How long does descaling take?", rambling, short)
    assert reply == "Descaling takes 40 minutes. [manual.md p. 1]"


def test_a_question_whose_words_are_mostly_on_no_page_is_not_answered_with_scraps() -> None:
    context = page("The kettle is blue. Kettles boil water.", "kettle.md")
    # "capacity" is on no page: the sentences that only share "kettle" do not answer
    reply = answer("What is the capacity of the kettle?", context)
    assert reply == f"{NOT_FOUND} The closest sections: kettle.md."


def test_the_question_words_in_the_questions_order_win_a_tie() -> None:
    backwards = page("To convert a number to a string, use str.", "a.md")
    forwards = page("To convert a string to a number, use int.", "b.md")
    reply = answer("How do I convert a string to a number?", backwards, forwards)
    assert reply == "To convert a string to a number, use int. [b.md p. 1]"


# --- question cues: of two pages that hold the same words, the shorter sentence would win;
# the cue makes the one with the kind of answer the question asks for win -------------------------


def test_a_how_many_question_prefers_the_sentence_with_a_number() -> None:
    plain = page("Unused annual leave days carry over.", "a.md")
    number = page("At most 5 days of annual leave carry over to next year.", "b.md")
    reply = answer("How many days of annual leave carry over?", plain, number)
    assert reply == "At most 5 days of annual leave carry over to next year. [b.md p. 1]"


def test_a_when_question_prefers_the_sentence_with_a_date() -> None:
    plain = page("The warranty starts on delivery of the appliance.", "a.md")
    dated = page("The warranty starts on 1 March for orders in the sale.", "b.md")
    reply = answer("When does the warranty start?", plain, dated)
    assert reply == "The warranty starts on 1 March for orders in the sale. [b.md p. 1]"


def test_a_can_i_question_prefers_the_sentence_with_the_modal_or_negation() -> None:
    plain = page("Installed dishwashers go back by collection when returned.", "a.md")
    modal = page("Installed dishwashers cannot be returned to the shop for a refund.", "b.md")
    reply = answer("Can I return an installed dishwasher?", plain, modal)
    assert reply == "Installed dishwashers cannot be returned to the shop for a refund. [b.md p. 1]"


def test_a_why_question_prefers_the_sentence_with_a_reason() -> None:
    plain = page("Strings in Python are immutable objects.", "a.md")
    reason = page("Strings in Python are immutable because it makes them fast.", "b.md")
    reply = answer("Why are Python strings immutable?", plain, reason)
    assert reply == "Strings in Python are immutable because it makes them fast. [b.md p. 1]"


# --- markdown and reStructuredText ----------------------------------------------------------------


FEES = """## Fees outside the warranty

| Item | Price |
|---|---|
| Call-out fee | €89 |
| Saturday surcharge | €35 |
"""


def test_a_table_row_is_quoted_as_a_sentence_with_its_column_names() -> None:
    reply = answer("What is the Saturday surcharge?", page(FEES, "fees.md", 4))
    assert reply == "Saturday surcharge — Price: €35. [fees.md p. 4]"


def test_a_tables_heading_gives_its_rows_their_meaning() -> None:
    # "fee" is in the section's heading, not in the row
    reply = answer("What is the Saturday fee?", page(FEES, "fees.md", 4))
    assert reply.startswith("Saturday surcharge — Price: €35.")


def test_headings_are_not_sentences_but_the_section_of_the_sentences_under_them() -> None:
    text = (
        "Why descale the kettle?\n-----------------------\n\nScale slows it down.\n\n"
        "# Cleaning the kettle\nWipe the outside with a cloth."
    )
    reply = answer("Why descale the kettle?", page(text))
    assert reply == "Scale slows it down. [doc.md p. 1]"


def test_markup_directives_and_notes_are_not_code() -> None:
    """A toctree's body is markup, never quoted; a note's body is prose, quoted as such."""
    text = (
        "Copy a dictionary with its copy method.\n\n.. toctree::\n\n   copying.rst\n\n"
        ".. note::\n\n   Copies of a dictionary are shallow.\n"
    )
    reply = answer("How do I copy a dictionary?", page(text, "faq.rst.txt"))
    assert reply == (
        "Copy a dictionary with its copy method. Copies of a dictionary are shallow. "
        "[faq.rst.txt p. 1]"
    )


# --- lookup-style context -----------------------------------------------------------------------


def row(model: str, price: str, capacity: str) -> Passage:
    text = f"model: {model}; category: dishwasher; price_eur: {price}; capacity: {capacity}"
    return Passage(text, (Source("products.csv", heading=model),))


def compare(question: str, rows: list[Passage]) -> list[str]:
    _, prompts = offline()
    facts = {"task": question}
    return run(prompts.tool(_rendered, facts, rows, tool="compare", subject=question)).text.split(
        "\n"
    )


def test_lookup_rows_are_compared_field_by_field_then_what_they_share() -> None:
    assert compare("Compare the KD-450 and the KD-600X", _rows()) == [
        "price_eur — KD-450: 549; KD-600X: 899 [products.csv]",
        "capacity — KD-450: 14 settings; KD-600X: 15 settings [products.csv]",
        "In common: category: dishwasher [products.csv]",
    ]


def test_a_comparison_shows_only_the_fields_the_question_names() -> None:
    question = "Which has the lower price, the KD-450 or the KD-600X?"
    assert compare(question, _rows()) == ["price_eur — KD-450: 549; KD-600X: 899 [products.csv]"]


def command(name: str, history: str, shared: str) -> Passage:
    text = f"command: {name}; area: branches; history: {history}; shared branches: {shared}"
    return Passage(text, (Source("commands.csv", heading=name),))


def test_phrases_that_differ_are_compared_with_the_words_they_share() -> None:
    rows = [
        command("git merge", "keeps every commit and adds a merge commit", "safe"),
        command("git rebase", "rewrites each commit as a new commit", "unsafe"),
    ]
    assert compare("What is the difference between git merge and git rebase?", rows) == [
        "history — git merge: keeps every commit and adds a merge commit; "
        "git rebase: rewrites each commit as a new commit (both: commit) [commands.csv]",
        "shared branches — git merge: safe; git rebase: unsafe [commands.csv]",
        "In common: area: branches [commands.csv]",
    ]


def test_a_comparison_says_when_no_field_is_shared() -> None:
    rows = [row("KD-450", "549", "14 settings"), row("KD-600X", "899", "15 settings")]
    rows = [Passage(p.text.replace("category: dishwasher; ", ""), p.sources) for p in rows]
    rows[1] = Passage(rows[1].text + "; status: current", rows[1].sources)
    assert compare("Compare the KD-450 and the KD-600X", rows)[-1] == (
        "In common: no field has the same value. [products.csv]"
    )


def test_a_record_in_an_answer_shows_the_fields_the_question_names() -> None:
    context = row("KD-450", "549", "14 settings"), page("Prices include VAT.")
    reply = answer("What is the price of the KD-450?", *context)
    assert reply.splitlines()[0] == "model: KD-450; price_eur: 549 [products.csv]"


def _rows() -> list[Passage]:
    return [row("KD-450", "549", "14 settings"), row("KD-600X", "899", "15 settings")]


def _rendered(variables: object) -> str:
    return "…"  # the offline provider answers from the call's facts, not the prompt


# --- deep search: gatekeeper, missing information, pages ----------------------------------------

OVENS = labelled(("parts.md", 2, "Availability", "Ovens and hobs: parts are kept for 10 years."))
FEE = labelled(("fees.md", 5, "Fees", "The no-fault-found fee is €65."))


def test_missing_info_asks_one_query_per_part_no_page_answers() -> None:
    _, prompts = offline()
    question = "How long is the delivery time for spare parts, and what is the call-out fee?"
    queries = run(prompts.missing_info(question, [OVENS], max_missing=3))
    assert queries == ["delivery time spare parts", "call-out fee"]


def test_missing_info_leaves_out_a_part_a_page_already_answers() -> None:
    _, prompts = offline()
    question = "How long is the delivery time for spare parts, and what is the no-fault-found fee?"
    queries = run(prompts.missing_info(question, [FEE], max_missing=3))
    assert queries == ["delivery time spare parts"]


def test_missing_info_joins_the_parts_past_the_limit_into_the_last_query() -> None:
    _, prompts = offline()
    question = "What is the kettle colour? What is the lid shape? What is the base size?"
    queries = run(prompts.missing_info(question, [OVENS], max_missing=2))
    assert queries == ["kettle colour", "lid shape base size"]


def test_the_gatekeeper_wants_each_part_answered_on_one_page() -> None:
    _, prompts = offline()
    question = "How many years are oven parts kept, and what is the no-fault-found fee?"
    enough, _ = run(prompts.gatekeeper(question, [OVENS, FEE]))
    assert enough is True
    enough, reason = run(prompts.gatekeeper(question, [OVENS]))
    assert enough is False and reason.endswith("not covered: no-fault-found, fee")


def test_read_page_needs_two_of_the_questions_words_on_the_page() -> None:
    _, prompts = offline()
    delete = page(
        "Use del to delete a name. Names are bound by assignment. Loops bind names too. "
        "Imports bind names. Functions bind names."
    )
    assert run(prompts.read_page("delete file", delete, tool="search")) is None
    files = page("To delete a file, use os.remove. Files can also be renamed.")
    assert run(prompts.read_page("delete file", files, tool="search")) == (
        "To delete a file, use os.remove."
    )


BRANCHING = """# Merging and rebasing

| Command | What it does | History |
|---|---|---|
| git merge | Joins two histories with a merge commit | keeps every commit as it was |
| git rebase | Replays your commits on top of another branch | rewrites each commit anew |
| git cherry-pick | Copies one commit onto the current branch | adds one new commit |
"""


def test_table_rows_a_comparing_question_names_are_compared_field_by_field() -> None:
    reply = answer(
        "What is the difference between git merge and git rebase?",
        page(BRANCHING, "branching.md", 3),
    )
    assert reply.splitlines() == [
        "What it does — git merge: Joins two histories with a merge commit; "
        "git rebase: Replays your commits on top of another branch (both: commit) "
        "[branching.md p. 3]",
        "History — git merge: keeps every commit as it was; "
        "git rebase: rewrites each commit anew (both: commit) [branching.md p. 3]",
        "In common: no field has the same value. [branching.md p. 3]",
    ]


def test_table_rows_are_quoted_as_rows_when_the_question_compares_nothing() -> None:
    reply = answer("What does git rebase do to the history?", page(BRANCHING, "branching.md", 3))
    assert "git rebase — What it does: Replays your commits" in reply
    assert "In common" not in reply


def test_a_framing_word_no_passage_holds_is_not_what_is_missing() -> None:
    """ "difference" frames the question; a table that never says it still answers."""
    _, prompts = offline()
    question = "What is the difference between git merge and git rebase?"
    enough, reason = run(prompts.gatekeeper(question, [page(BRANCHING, "branching.md", 3)]))
    assert enough is True, reason


# --- the search's order: a later page of the same search must match clearly better ------------


def found(text: str, document: str, key: str = "manual_rag:1") -> Passage:
    """A page of a retrieval tool's result: its passages share the result's key, in the
    search's order."""
    return Passage(text, (Source(document, 1),), key)


LONGER = "Citric acid descales the kettle and removes limescale quickly."
SHORTER = "Citric acid descales the kettle."  # the same words in fewer: alone, it would win


def test_of_two_pages_of_one_search_the_first_is_quoted_though_a_later_one_is_shorter() -> None:
    reply = answer("Which acid descales the kettle?", found(LONGER, "a.md"), found(SHORTER, "b.md"))
    assert reply == f"{LONGER} [a.md p. 1]"


def test_pages_of_two_searches_are_each_ranked_within_their_own() -> None:
    # b.md is the first page of its own search: it stands as a.md does, and the shorter wins
    first, other = found(LONGER, "a.md", "rag:1"), found(SHORTER, "b.md", "rag:2")
    reply = answer("Which acid descales the kettle?", first, other)
    assert reply == f"{SHORTER} [b.md p. 1]"


def test_a_later_page_that_holds_more_of_the_question_is_quoted() -> None:
    first = found("Descale the kettle regularly.", "a.md")
    later = found("Descale the kettle every four weeks with citric acid.", "b.md")
    reply = answer("How many weeks between descaling the kettle with citric acid?", first, later)
    assert reply.startswith("Descale the kettle every four weeks with citric acid. [b.md p. 1]")


# --- a paragraph that opens with a question (a FAQ's entry) ----------------------------------

FAQ = (
    "How do I ignore changes to a tracked file? Git does not provide a way to do this. "
    "The reason is that Git must know whether the changes are precious.\n\n"
    "How do I know if I want a fetch or a pull? A fetch stores a copy of the remote changes."
)


def test_a_faq_question_is_never_quoted_as_an_answer() -> None:
    reply = answer("can git ignore changes to a tracked file", page(FAQ))
    assert "How do I ignore" not in reply


def test_the_sentences_after_a_faq_question_answer_it_by_its_words() -> None:
    # "ignore", "tracked" are only in the question the paragraph opens with
    reply = answer("can git ignore changes to a tracked file", page(FAQ))
    assert reply.startswith("Git does not provide a way to do this.")


def test_a_rhetorical_question_inside_a_paragraph_is_a_sentence_of_it() -> None:
    text = "The block is optional. However, this raises a problem: where does the code go? Last."
    reply = answer("where does the code go in the block", page(text))
    assert "where does the code go?" in reply
