"""What a page is about, as its vector should say it: its headings and its first prose, without
the boilerplate a reference page opens with.

A page vector is of the page's opening (the model reads 256 word pieces), so what comes first
decides where the page lands. Reference pages often open with what is not their subject: a
"See also" list of names left over from the section before, a summary table of labels and
values (`| Syntax: | Name On|Off |`, `| Default: | … |`, `| Context: | … |`). A question about
the page's subject then lands nearer to any page of names than to this one. So the text a page
is embedded by skips, at its start only:

- a list whose every item is a link or a short name (`- [Installing](install.html)`,
  `` - `ServerSignature` ``): an index of other places;
- a table of label–value rows (two cells a row, no header row), keeping the values that are
  prose (a description: four plain words or more, most of its words) and leaving out the
  names, syntaxes and defaults;
- the heading of a section whose text was nothing but those (`See also` over its list).

What follows — the first prose, code, a table with a header — and everything after it is kept
as written. A page that is nothing but such blocks is embedded whole: it is what it is.
"""

from __future__ import annotations

import re

_BLOCKS = re.compile(r"\n{2,}")
_HEADING = re.compile(r"^#{1,6} \S")
_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?P<item>.*)$")
_LINK = re.compile(r"^`?\[[^\]]+\]\([^)]*\)`?$")
_SHORT_ITEM_WORDS = 5  # a list item of at most this many words, no sentence, is a name
_PROSE_WORDS = 4  # a table value of at least this many words is a description, kept


def _is_index_list(block: str) -> bool:
    """Every line an item that is a link or a short name: a list of other places."""
    lines = [line for line in block.splitlines() if line.strip()]
    if not lines:
        return False
    for line in lines:
        match = _ITEM.match(line)
        if match is None:
            return False
        item = match["item"].strip()
        if _LINK.match(item):
            continue
        if len(item.split()) > _SHORT_ITEM_WORDS or item.endswith((".", "!", "?", ":")):
            return False
    return True


def _label_values(block: str) -> list[str] | None:
    """The rows of a label–value table (two cells a row, no header row), or None."""
    lines = block.splitlines()
    if not lines or not all(line.startswith("|") and line.rstrip().endswith("|") for line in lines):
        return None
    values = []
    for line in lines:
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 2 or set(cells[0]) <= set("-: "):  # another shape, or a header row
            return None
        values.append(cells[1])
    return values


_WORD = re.compile(r"^[A-Za-z][a-z]*[,.;]?$")  # a word of prose: not a name, a path, a syntax


def _prose(value: str) -> bool:
    """A description (`Types of directives allowed in .htaccess files`), not a syntax or a
    default (`AllowOverride All/None/directive-type [directive-type] ...`)."""
    words = value.split()
    plain = sum(1 for word in words if _WORD.match(word))
    return plain >= _PROSE_WORDS and plain * 2 >= len(words)


def lead_text(text: str) -> str:
    """The page's text from its first prose on, with the headings and prose values of the
    boilerplate before it kept (see the module docstring)."""
    kept: list[str] = []
    heading_at = -1  # where in `kept` the last heading is
    section_boilerplate = False  # its section has had boilerplate (and nothing else) so far
    position = 0
    for match in [*_BLOCKS.finditer(text), None]:
        end = match.start() if match else len(text)
        block = text[position:end].strip()
        next_position = match.end() if match else len(text)
        if not block:
            position = next_position
            continue
        if _HEADING.match(block) and "\n" not in block:
            if section_boilerplate and heading_at == len(kept) - 1 >= 0:
                kept.pop()  # `See also` over its list: nothing of it said what the page is
            kept.append(block)
            heading_at, section_boilerplate = len(kept) - 1, False
        elif _is_index_list(block):
            section_boilerplate = True
        elif (values := _label_values(block)) is not None:
            kept.extend(value for value in values if _prose(value))
            section_boilerplate = True
        else:  # the first prose, code or table: from here on the page is as written
            return "\n\n".join([*kept, text[position:].strip()]) if kept else text[position:]
        position = next_position
    return text  # nothing but headings, lists of names and summary tables
