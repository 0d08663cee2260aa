"""The offline gatekeeper judges coverage by the sentences an answer would quote, and the
offline answer quotes the section a question heads, never the question itself (docs/offline.md)."""

from __future__ import annotations

from runner.llm.prompts import Passage
from runner.sources import Source
from runner.text.questions import defined_term, names

from .helpers import offline, run

FAQ = Passage(
    "[faq.md, page 4] How do I reset the widget?\n"
    "How do I reset the widget?\n\n"
    "Hold the reset button for ten seconds. The light blinks twice when it is done. "
    "Your settings are kept. Wi-Fi passwords are not. The clock resets to midnight.",
    (Source("faq.md", 4),),
)


def gatekeeper(question: str, *passages: Passage) -> tuple[bool, str]:
    _, prompts = offline()
    return run(prompts.gatekeeper(question, list(passages)))


def answer(question: str, *context: Passage) -> str:
    _, prompts = offline()
    return run(prompts.answer(question, [], list(context))).text


def test_names_are_identifiers_and_capitalised_words_inside_a_sentence() -> None:
    assert names("Why does Python need os.path and __init__ for KW-620?") == [
        "python",
        "os.path",
        "__init__",
        "kw-620",
    ]
    assert names("How do I reset it?") == []


def test_a_name_the_quoted_sentences_lack_sends_the_question_on() -> None:
    page = Passage("The widget resets with the reset button on the back.", (Source("a.md", 1),))
    enough, reason = gatekeeper("How do I reset the Kestrel widget?", page)
    assert enough is False
    assert "names not in those sentences: kestrel" in reason


def test_a_what_is_question_needs_a_sentence_that_says_what_it_is() -> None:
    mention = Passage("Python 3.12 removed the distutils package.", (Source("a.md", 1),))
    enough, reason = gatekeeper("What is Python?", mention)
    assert enough is False and "no sentence says what Python is" in reason
    definition = Passage("Python is a high-level programming language.", (Source("b.md", 1),))
    assert gatekeeper("What is Python?", definition)[0] is True


def test_defined_terms_are_short_what_is_questions_only() -> None:
    assert defined_term("What is a class?") == "class"
    assert defined_term("What's the GIL?") == "GIL"
    assert defined_term("What is the best way to read every line of a file?") is None
    assert defined_term("How do I reset it?") is None


def test_the_answer_never_quotes_the_question_back() -> None:
    text = answer("How do I reset the widget?", FAQ)
    assert "How do I reset the widget?" not in text
    assert text.startswith("Hold the reset button for ten seconds.")


def test_a_table_of_contents_line_that_repeats_the_question_is_never_quoted() -> None:
    """Even where a TOC reaches the answer (a corpus that keeps navigation pages): its line,
    with the page reference after it, is still the question."""
    toc = Passage(
        "- How can I remove duplicate elements from a list or array? [toc p. 23]\n"
        "- How do I iterate over a sequence in reverse order? [toc p. 23]",
        (Source("toc.md", 1),),
    )
    text = answer("How can I remove duplicate elements from a list or array?", toc)
    assert "remove duplicate" not in text


def test_a_section_headed_by_the_question_is_quoted_from_its_start_in_order() -> None:
    text = answer("How do I reset the widget?", FAQ)
    assert "The light blinks twice when it is done. Your settings are kept." in text
    assert text.index("Hold the reset") < text.index("The clock resets")


def test_a_heading_line_is_never_quoted_as_the_answer() -> None:
    page = Passage(
        "# Resetting the widget\n\nHold the reset button for ten seconds.",
        (Source("a.md", 1),),
    )
    assert "Resetting the widget" not in answer("How do I reset the widget?", page)


def test_a_long_page_place_is_a_heading_and_never_quoted() -> None:
    place = "Programming FAQ › How can I have modules that mutually import each other in Python?"
    page = Passage(
        f"[faq.md, page 9] {place}\nMove the imports into the functions that need them.",
        (Source("faq.md", 9),),
    )
    text = answer("How can I have modules that mutually import each other?", page)
    assert "Programming FAQ" not in text
    assert text.startswith("Move the imports into the functions that need them.")


def test_a_soft_hyphen_in_the_question_still_matches_the_page() -> None:
    text = answer("How do I re\u00adset the\u00a0widget?", FAQ)
    assert text.startswith("Hold the reset button for ten seconds.")


# --- a guaranteed supplement adds to the context, it never displaces a page that answered -------


def test_a_guaranteed_passage_does_not_keep_out_a_page_that_answers_the_question() -> None:
    """A deep search's supplement (guaranteed, C28) covering the question's words beside a
    first-search page that answers it: both are quoted."""
    hooks = Passage(
        "The pre-push hook runs before git push sends anything.", (Source("githooks.md", 2),)
    )
    supplement = Passage(
        "Hooks on the server run before a push is accepted. [git-receive-pack.md p. 1]",
        (Source("git-receive-pack.md", 1),),
    )
    _, prompts = offline()
    question = "Which hook runs before a push?"
    text = run(prompts.answer(question, [supplement], [hooks])).text
    assert text.splitlines() == [
        "Hooks on the server run before a push is accepted. [git-receive-pack.md p. 1]",
        "The pre-push hook runs before git push sends anything. [githooks.md p. 2]",
    ]


def test_a_tools_own_answer_is_not_joined_by_a_page_that_only_matches_its_words() -> None:
    """A tool's own answer (guaranteed, C23, no page label) holding the question's words
    settles them: a page sentence matching them as fully (an accessory's warranty under the
    question's words) is not mixed in, unlike beside a deep search's supplement of pages."""
    tool_answer = Passage(
        "The KW-720X washing machine comes with a 3-year warranty.", (Source("products.csv"),)
    )
    accessory = Passage(
        "Stacking kits for a washing machine carry a 1-year warranty.",
        (Source("stacking-kits.md", 10),),
    )
    _, prompts = offline()
    question = "What warranty do I get on my washing machine?"
    text = run(prompts.answer(question, [tool_answer], [accessory])).text
    assert "Stacking kits" not in text
    assert text.startswith("The KW-720X washing machine comes with a 3-year warranty.")


def test_a_page_that_answers_only_part_of_the_question_competes_for_that_part_alone() -> None:
    """The supplement answers the second part; the page, which answers neither, stays out."""
    unrelated = Passage("Tags name commits.", (Source("git-tag.md", 1),))
    supplement = Passage(
        "A hook exiting non-zero stops the push. [githooks.md p. 2]", (Source("githooks.md", 2),)
    )
    _, prompts = offline()
    question = "Can a hook stop the push?"
    text = run(prompts.answer(question, [supplement], [unrelated])).text
    assert text == "A hook exiting non-zero stops the push. [githooks.md p. 2]"


def test_numbers_and_compounds_of_plain_words_are_not_names() -> None:
    """A number is a value the question gives ("0.1 + 0.2"), `one-line` is wording: a page
    need not repeat them to answer."""
    assert names("Why is 0.1 + 0.2 not exactly 0.3 in Python?") == ["python"]
    assert names("Is there a small one-line function, key-value style?") == []
    assert names("Does the KW-620 run on Python 3.11?") == ["kw-620", "python"]


def test_a_name_in_the_heading_of_a_quoted_sentence_is_held() -> None:
    """An FAQ entry "…from C?" answers about C though its sentences only say how."""
    entry = Passage(
        "[faq.md, page 7] How can I evaluate a Python expression from C?\n"
        "Call PyRun_String with the start symbol Py_eval_input; it evaluates the expression.",
        (Source("faq.md", 7),),
    )
    enough, reason = gatekeeper("How can I evaluate a Python expression from C?", entry)
    assert enough is True, reason


def test_a_name_in_the_quoted_code_is_held() -> None:
    entry = Passage(
        "Adding to a list inside a tuple raises an error here:\n\n"
        ">>> a_tuple = (['foo'], 'bar')\n>>> a_tuple[0] += ['item']\n",
        (Source("faq.md", 9),),
    )
    _, reason = gatekeeper("Why does adding to a list in a_tuple raise an error?", entry)
    assert "names not in those sentences" not in reason


def test_what_is_x_for_asks_what_it_is_used_for_not_what_it_is() -> None:
    assert defined_term("What is Python good for?") is None
    assert defined_term("What is a decorator?") == "decorator"
