"""The block markup every layer reads alike: what a heading is and what opens and closes a
code fence. One rule each, in one place: the readers cut documents into blocks with them
(`runner.retrieval.readers.markup`), the offline provider reads pages' text with them, and the
citation rewriter keeps quoted code out of its reach (`runner.llm.citations`)."""

from __future__ import annotations

import re

# "## Heading", "## Heading ##": a Markdown (ATX) heading; group 1 its marks, group 2 its title
ATX_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
# a line of one punctuation mark repeated at least three times: a reST title's under- or
# overline ("=====", "-----", "~~~~"), or a rule
ADORNMENT = re.compile(r"^([!-/:-@\[-`{-~])\1{2,}\s*$")
# a code fence opens with three or more backticks or tildes (CommonMark); group 1 the fence
FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
# a fenced block as a whole, from its opening line to the fence that closes it
FENCED_BLOCK = re.compile(r"(?ms)^(`{3,}|~{3,})[^\n]*\n.*?^\1[`~]*[ \t]*$")


def closes_fence(line: str, fence: str) -> bool:
    """The line closes a block opened by `fence`: the same mark, at least as long, alone."""
    stripped = line.strip()
    return stripped.startswith(fence) and not stripped.strip(fence[0])
