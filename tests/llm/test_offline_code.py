"""Answers that keep the code (docs/offline.md, "Code"): the offline answer quotes the code
block that belongs to a quoted sentence, verbatim, and never shortens a sentence by dropping the
code inside it. Small documents in each format the readers hand over: Markdown, reST, plain
text, HTML."""

from __future__ import annotations

from runner.llm.prompts import Passage
from runner.retrieval.pages import paginate
from runner.retrieval.readers.html import READER
from runner.retrieval.reading import pages_context
from runner.sources import Source

from .helpers import offline, run


def answer(question: str, *context: Passage, guaranteed: tuple[Passage, ...] = ()) -> str:
    _, prompts = offline()
    return run(prompts.answer(question, list(guaranteed), list(context))).text


def page(text: str, document: str = "doc.md") -> Passage:
    return Passage(text, (Source(document, 1),))


# --- a sentence ending in ":" and the block after it ----------------------------------------


def test_the_indented_block_after_an_introducing_sentence_is_quoted_with_it() -> None:
    text = (
        "How do I strip blank space from the beginning/end of a string?\n"
        "---------------------------------------------------------------\n\n"
        "You can do that with a pair of substitutions:\n\n"
        "    s/^\\s+//;\n    s/\\s+$//;\n\n"
        "You can also write that as a single substitution, although it is slower.\n"
    )
    reply = answer("How do I strip blank space from a string?", page(text, "perlfaq4.txt"))
    assert reply.splitlines()[:5] == [
        "You can do that with a pair of substitutions: [perlfaq4.txt p. 1]",
        "```",
        "s/^\\s+//;",
        "s/\\s+$//;",
        "```",
    ]


def test_a_markdown_fence_after_a_colon_is_quoted_with_its_sentence() -> None:
    text = "# Install\n\nTo install the tool, run:\n\n```sh\npip install tool\n```\n"
    reply = answer("How do I install the tool?", page(text, "README.md"))
    assert reply == "To install the tool, run: [README.md p. 1]\n```\npip install tool\n```"


def test_a_rest_literal_block_is_quoted_and_its_sentence_keeps_its_colon() -> None:
    text = "Copy a dictionary with its copy method::\n\n   new = old.copy()\n\nDone.\n"
    reply = answer("How do I copy a dictionary?", page(text, "faq.rst.txt"))
    assert reply == (
        "Copy a dictionary with its copy method: [faq.rst.txt p. 1]\n```\nnew = old.copy()\n```"
    )


def test_a_code_block_directive_is_quoted_without_its_options() -> None:
    text = (
        "Read a file line by line with a for loop:\n\n"
        ".. code-block:: python\n   :linenos:\n\n   for line in f:\n       print(line)\n"
    )
    reply = answer("How do I read a file line by line?", page(text, "io.rst.txt"))
    assert reply.endswith("```\nfor line in f:\n    print(line)\n```")


def test_an_interactive_session_after_a_colon_is_quoted_with_its_output() -> None:
    text = "Sorting a list of words ignores nothing by default:\n\n>>> sorted(['b', 'a'])\n"
    text += "['a', 'b']\n"
    reply = answer("How do I sort a list of words?", page(text, "howto.rst.txt"))
    assert "```\n>>> sorted(['b', 'a'])\n['a', 'b']\n```" in reply


def test_a_code_block_too_long_to_quote_leaves_its_sentence_closed() -> None:
    code = "\n".join(f"    step_{n}()" for n in range(20))
    text = f"Every step of the set-up is run in this order:\n\n{code}\n"
    reply = answer("How is the set-up run?", page(text, "setup.txt"))
    assert reply == "Every step of the set-up is run in this order. [setup.txt p. 1]"


# --- inline code inside a sentence ---------------------------------------------------------------


def test_a_rest_inline_literal_stays_in_its_sentence() -> None:
    text = "For OS/2 just use ``extproc perl -S`` as the first line of the script.\n"
    reply = answer("How do I run a script on OS/2?", page(text, "perlfaq.rst"))
    assert reply == (
        "For OS/2 just use `extproc perl -S` as the first line of the script. [perlfaq.rst p. 1]"
    )


def test_a_literal_block_inside_a_sentence_is_quoted_in_that_sentence() -> None:
    text = "For OS/2 just use\n\n    extproc perl -S\n\nas the first line of the script.\n"
    reply = answer("How do I run a script on OS/2?", page(text, "perlfaq.txt"))
    assert reply == (
        "For OS/2 just use `extproc perl -S` as the first line of the script. [perlfaq.txt p. 1]"
    )


def test_emphasis_marks_inside_inline_code_are_code() -> None:
    text = "Match every word with `\\w*` and nothing else with `*x*`.\n"
    reply = answer("How do I match every word?", page(text, "re.md"))
    assert reply == "Match every word with `\\w*` and nothing else with `*x*`. [re.md p. 1]"


# --- HTML: <pre> and <code> -------------------------------------------------------------------

GIT_RESET = b"""<html><head><title>git-reset(1)</title></head><body>
<h1>git-reset(1)</h1>
<h2>EXAMPLES</h2>
<dl><dt>Undo a commit and keep the changes</dt>
<dd><pre>$ git commit ...
$ git reset --soft HEAD^      <b>(1)</b>
$ edit                        <b>(2)</b></pre>
<ol><li><p>Leaves the working tree as it was before the commit.</p></li></ol></dd></dl>
<p>Use <code>git reset --hard</code> to throw the changes away.</p>
</body></html>"""


def git_reset_pages() -> Passage:
    pages = paginate(READER.read("git-reset.html", GIT_RESET), 250)
    return Passage(pages_context(pages), tuple(p.source for p in pages))


def test_an_html_pre_block_is_quoted_with_the_line_before_it() -> None:
    reply = answer("How do I undo the last commit but keep the changes?", git_reset_pages())
    assert "Undo a commit and keep the changes [git-reset.html p. 1]\n```\n" in reply
    assert "$ git reset --soft HEAD^      (1)" in reply


def test_html_inline_code_is_quoted_in_backticks() -> None:
    reply = answer("How do I throw the changes away?", git_reset_pages())
    assert "Use `git reset --hard` to throw the changes away." in reply


# --- code through the rest of the answer --------------------------------------------------------


def test_a_list_in_the_code_is_not_read_as_a_citation() -> None:
    text = "A list of two numbers is written:\n\n```\nx = [1, 2]\n```\n"
    reply = answer("How do I make a list of two numbers?", page(text, "lists.md"))
    assert reply == "A list of two numbers is written: [lists.md p. 1]\n```\nx = [1, 2]\n```"


def test_code_quoted_by_a_guaranteed_answer_is_quoted_again_with_its_citation() -> None:
    composed = Passage(
        "A list of two numbers is written: [lists.md p. 1]\n```\nx = [1, 2]\n```",
        (Source("lists.md", 1),),
    )
    reply = answer("How do I make a list of two numbers?", guaranteed=(composed,))
    assert reply == "A list of two numbers is written: [lists.md p. 1]\n```\nx = [1, 2]\n```"


def test_a_line_starting_with_dots_inside_a_paragraph_is_prose_not_a_session() -> None:
    text = 'Place ``extern "C" {\n... }`` around the include files, in C++.\n'
    reply = answer("How do I place the include files in C++?", page(text, "faq.rst.txt"))
    assert (
        reply == 'Place `extern "C" { ... }` around the include files, in C++. [faq.rst.txt p. 1]'
    )


def test_a_rest_literal_mark_after_a_space_is_dropped_not_made_a_colon() -> None:
    text = "Sort the pairs, then pick out the element you want. ::\n\n   sorted(pairs)\n"
    reply = answer("How do I sort the pairs?", page(text, "faq.rst.txt"))
    assert reply.splitlines()[0] == (
        "Sort the pairs, then pick out the element you want. [faq.rst.txt p. 1]"
    )


def test_a_page_answer_that_introduces_code_keeps_it_through_the_deep_search() -> None:
    """A search's page answer (`[document, page N] answer`) whose sentence ends with a colon is
    that sentence, not a heading: compose quotes it with its code."""
    found = Passage(
        "[faq.md, page 3] Use the reversed built-in function:\n"
        "```\nfor x in reversed(sequence):\n    print(x)\n```",
        (Source("faq.md", 3),),
        "1.1.s:search",
        True,  # a page answer: the page was read
    )
    _, prompts = offline()
    question = "How do I loop over a sequence in reversed order?"
    composed = run(prompts.compose(question, [found], tool="deep_search")).text
    assert composed == (
        "Use the reversed built-in function: [faq.md p. 3]\n"
        "```\nfor x in reversed(sequence):\n    print(x)\n```"
    )


def test_a_numbered_step_that_introduces_an_indented_block_owns_it() -> None:
    text = "1. Install the tool:\n\n        pip install tool\n\n2. Run the tool.\n"
    reply = answer("How do I install the tool?", page(text, "README.md"))
    assert reply.startswith("1. Install the tool: [README.md p. 1]\n```\npip install tool\n```")


def test_a_quotation_indented_under_a_colon_is_prose_not_code() -> None:
    text = (
        "The most important tip is:\n\n"
        "    Software should only work with Unicode strings internally, decoding the input "
        "data as soon as possible.\n"
    )
    reply = answer("Which tip about Unicode strings is the most important?", page(text, "u.rst"))
    assert "Software should only work with Unicode strings internally" in reply
    assert "```" not in reply


def test_a_title_underlined_with_tildes_is_a_heading_not_a_fence() -> None:
    text = (
        "Request-independent fields\n~~~~~~~~~~~~~~~~~~~~~~~~~~\n"
        "These fields must always be filled in with the correct values.\n"
    )
    reply = answer("Which fields must always be filled in?", page(text, "buffer.rst"))
    assert reply == (
        "These fields must always be filled in with the correct values. [buffer.rst p. 1]"
    )


def test_two_blocks_after_one_sentence_are_both_quoted_with_it() -> None:
    text = "Set the variable, then read it back:\n\n```\nx = 1\n```\n\n```\nprint(x)\n```\n"
    reply = answer("How do I set a variable and read it?", page(text, "vars.md"))
    assert reply == (
        "Set the variable, then read it back: [vars.md p. 1]\n```\nx = 1\n\nprint(x)\n```"
    )


def test_a_short_lead_in_to_code_comes_with_the_sentence_before_it() -> None:
    text = (
        "To create an index on a column, use CREATE INDEX. For example:\n\n"
        "```\nCREATE INDEX test1_id_index ON test1 (id);\n```\n"
    )
    reply = answer("How do I create an index on a column?", page(text, "indexes.html"))
    assert reply == (
        "To create an index on a column, use CREATE INDEX. For example: [indexes.html p. 1]\n"
        "```\nCREATE INDEX test1_id_index ON test1 (id);\n```"
    )
