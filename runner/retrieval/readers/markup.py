"""The text formats: Markdown, reStructuredText and plain text, parsed into blocks with plain
Python (fast: the 1.4M words of the Python docs in about a second)."""

from __future__ import annotations

import string
from collections.abc import Iterator, Sequence

from runner.retrieval.readers.blocks import Block
from runner.text.markup import ADORNMENT, ATX_HEADING, FENCE, closes_fence

_PUNCTUATION = frozenset(string.punctuation)


def blocks(text: str, fmt: str) -> Iterator[Block]:
    """Paragraphs and headings in order. Markdown: ATX and setext headings, fenced code kept
    whole. reStructuredText (and plain text, which often uses the same convention): a title line
    underlined, optionally also overlined, with one repeated punctuation character; its level is
    the order in which its adornment style first appears, as reST defines it."""
    lines = text.splitlines()
    paragraph: list[str] = []
    styles: list[str] = []  # reST adornment styles in order of first appearance
    fence: str | None = None  # the fence of the code block being read
    i = 0
    while i < len(lines):
        line = lines[i]
        in_fence = fence is not None
        if fmt == "markdown" and fence is not None and closes_fence(line, fence):
            fence = None
        elif fmt == "markdown" and fence is None and (opened := FENCE.match(line)):
            fence = opened[1]
            in_fence = True
        if not in_fence:
            heading = _heading_at(lines, i, fmt, starts_paragraph=not paragraph)
            if heading is not None:
                title, consumed, style = heading
                if paragraph:
                    yield Block("\n".join(paragraph))
                    paragraph = []
                if style not in styles:
                    styles.append(style)
                level = len(style) if style.startswith("#") else styles.index(style) + 1
                yield Block("\n".join(lines[i : i + consumed]), heading=title, level=level)
                i += consumed
                continue
        if line.strip() or in_fence:
            paragraph.append(line)
        elif paragraph:
            yield Block("\n".join(paragraph))
            paragraph = []
        i += 1
    if paragraph:
        yield Block("\n".join(paragraph))


def _heading_at(
    lines: Sequence[str], i: int, fmt: str, *, starts_paragraph: bool
) -> tuple[str, int, str] | None:
    """(title, lines consumed, adornment style) when a heading starts at line i. Cheap tests
    first: this runs on every line of the corpus."""
    line = lines[i]
    if fmt == "markdown" and line.startswith("#"):
        atx = ATX_HEADING.match(line)
        if atx:
            return atx.group(2), 1, atx.group(1)
    # adorned titles begin a paragraph, on an unindented line
    if not starts_paragraph or i + 1 >= len(lines) or not line or line[0].isspace():
        return None
    following = lines[i + 1]
    # an overlined title: adornment, title, the same adornment
    overlined = fmt != "markdown" and i + 2 < len(lines) and line[0] in _PUNCTUATION
    if overlined and ADORNMENT.match(line):
        title, under = following.strip(), lines[i + 2].strip()
        if title and under == line.strip():
            return title, 3, "over" + under[0]
    # an underlined title: the line, then an adornment at least as long
    if not following or following[0] not in _PUNCTUATION or not line.strip():
        return None
    under = following.rstrip()
    if not ADORNMENT.match(under) or len(under) < len(line.rstrip()):
        return None
    if fmt == "markdown":
        if under[0] not in "=-":
            return None
        return line.strip(), 2, "#" if under[0] == "=" else "##"
    return line.strip(), 2, under[0]
