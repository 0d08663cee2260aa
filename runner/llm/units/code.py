"""Code in the passages the offline provider reads: which blocks are code, and how quoted code
looks in an answer. For technical documentation the code is often the answer, so it is quoted
verbatim with the sentence it belongs to (docs/offline.md, "Code").

- **Code blocks**: Markdown fences (```` ``` ```` or `~~~`, as the HTML reader writes `<pre>`),
  reStructuredText literal blocks (after a paragraph ending in `::`), the bodies of code
  directives (`.. code-block::`, `.. code::`, `.. sourcecode::`, `.. testcode::`,
  `.. doctest::`), interactive sessions (`>>>` up to a blank line), and a block indented four
  spaces deeper than the paragraph before it when that paragraph introduces it (ends with `:`)
  or stops mid-sentence (as Markdown, plain text and POD write a literal block) — unless the
  block reads as prose (plain words ending with a full stop: a quotation, read as sentences).
- **Inline code**: Markdown backticks, reStructuredText ``` ``double backticks`` ```, HTML
  `<code>` (which the HTML reader writes as backticks): kept inside its sentence, as `` `code` ``.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable

CODE_LINES = 15  # a longer block is not quoted: its sentence then reads as a full stop
INLINE_CODE_CHARS = 80  # a one-line block inside a sentence this short is quoted in it

# directives whose body is code (quoted with its sentence) or markup (never quoted)
CODE_DIRECTIVE = re.compile(r"^\s*\.\.\s+(code|code-block|sourcecode|testcode|doctest)::")
MARKUP_DIRECTIVE = re.compile(
    r"^\s*\.\.\s+(testsetup|testcleanup|testoutput|literalinclude|highlight|productionlist|"
    r"toctree|index|image|figure|raw|csv-table|list-table|table|math|graphviz|only|include|"
    r"autoclass|automodule|autofunction)::"
)
_DIRECTIVE_OPTION = re.compile(r"^:[\w-]+:")  # `:linenos:`, `:caption: …` after a directive
_CODE_SPAN = re.compile(r"(`+)[^`]+?\1")  # a backticked span (code, or a reST role's body)


def block_text(lines: list[str], *, directive: bool = False) -> str:
    """The code as it reads: common indentation removed, blank lines at either end dropped (and
    a directive's option lines, which are not code)."""
    text = textwrap.dedent("\n".join(line.rstrip() for line in lines)).strip("\n")
    if directive:
        kept = text.splitlines()
        while kept and _DIRECTIVE_OPTION.match(kept[0].strip()):
            kept.pop(0)
        text = textwrap.dedent("\n".join(kept)).strip("\n")
    return text


PROSE_WORDS = 8  # an indented block of at least this many words…
PROSE_SHARE = 0.85  # …this share of them plain words, ending with a full stop, is a quotation
_PLAIN_WORD = re.compile(r"^[\"'(]?[A-Za-z][a-z'’-]*[.,;:!?)\"']*$")


def reads_as_prose(lines: list[str]) -> bool:
    """An indented block that is a quotation in prose (a reST block quote), not code: plain
    words, ending with a full stop."""
    words = " ".join(lines).split()
    if len(words) < PROSE_WORDS or not words[-1].endswith((".", "!", "?")):
        return False
    plain = sum(1 for word in words if _PLAIN_WORD.match(word))
    return plain / len(words) >= PROSE_SHARE


def quotable(code: str) -> bool:
    return bool(code.strip()) and len(code.splitlines()) <= CODE_LINES


def inline(code: str) -> str | None:
    """One short line of code as inline code (`` `extproc perl -S` ``), or None."""
    if "\n" in code or len(code) > INLINE_CODE_CHARS or "`" in code:
        return None
    return f"`{code.strip()}`"


def fenced(code: str) -> str:
    """A code block as Markdown: fenced by more backticks than it holds in a row."""
    longest = max((len(run) for run in re.findall(r"`+", code)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{code}\n{fence}"


def outside_code(text: str, change: Callable[[str], str]) -> str:
    """`change` applied to the text between backticked spans; the spans stay as they are."""
    pieces, start = [], 0
    for match in _CODE_SPAN.finditer(text):
        pieces.append(change(text[start : match.start()]))
        pieces.append(match[0])
        start = match.end()
    pieces.append(change(text[start:]))
    return "".join(pieces)
