"""HTML documents (the `html` extra: lxml).

Why lxml and our own walk rather than markdownify or html2text: lxml's C parser reads the
PostgreSQL manual (1,169 files, 19 MB) in 0.4 s, where BeautifulSoup + markdownify took 15 s
for the same files — past the whole indexing budget — and html2text is GPL-licensed. The walk
below only has to produce what pages need: headings and paragraph blocks.

- `h1`–`h6` become headings (their level is kept, for heading paths), but for an admonition's
  label (DocBook's `<div class="note"><h3>Note</h3>`): it opens the note's first line
  (`Note: …`), and the note stays in the section it annotates;
- the site's frame is dropped: the page's `header`, `footer` and `aside` (not an article's or
  a section's own, which hold its title and notes), `script`, `style`, `noscript`, `template`,
  and the furniture furniture.py names (`nav`, ARIA roles, the bars documentation generators
  mark by id or class, the corpus's own `html.drop` selectors, heading permalinks);
- the text is written as Markdown, which pages and the offline provider read: headings as `#`
  lines, `pre` one fenced code block with its line breaks, inline code (`code`, `kbd`, `samp`,
  `tt`) in backticks, a list one block with an item a line
  (`- item`, `1. item`), a table one block of Markdown rows (`| cell | cell |`), a line that is
  nothing but a link as a Markdown link (`- [Installing](install.html)`: what tables of
  contents and site maps are made of; navigation detection counts such lines); other links as
  their text;
- entities are decoded by the parser and the text is normalised (NBSP to a space, …).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import lxml.etree
import lxml.html

from runner.retrieval.readers import Block, CorpusError, Document
from runner.retrieval.readers.furniture import clean_heading, drop_furniture
from runner.text.words import normalize

_DROPPED_TAGS = ("script", "style", "noscript", "template", "iframe")
# a page's header and footer are the site's banner and footer, an aside beside the content its
# sidebar; inside an article or a section they are its own (HTML's rule, which ARIA follows):
# `<article><header><h1>Title` keeps its title, a note in an `<aside>` in the text stays
_SECTIONING = "ancestor::article or ancestor::section or ancestor::main"
_FRAME_TAGS = ("header", "footer", "aside")
_DROP_XPATH = " | ".join(
    [f"//{tag}" for tag in _DROPPED_TAGS] + [f"//{tag}[not({_SECTIONING})]" for tag in _FRAME_TAGS]
)
_HEADINGS = {f"h{level}": level for level in range(1, 7)}
_PARAGRAPHS = frozenset(
    [
        "p",
        "div",
        "section",
        "article",
        "main",
        "aside",
        "blockquote",
        "figure",
        "figcaption",
        "dl",
        "dd",
        "form",
        "fieldset",
        "address",
        "details",
        "summary",
        "center",
        "body",
        "hr",
    ]
)
_LISTS = frozenset({"ul", "ol", "menu"})
_INLINE_CODE = frozenset({"code", "kbd", "samp", "tt"})
_SPACES = re.compile(r"\s+")
# a link's text and target inside a line being gathered, between private-use characters
_OPEN, _HREF, _CLOSE = "\ue000", "\ue001", "\ue002"
_LINK = re.compile(f"{_OPEN}(?P<text>[^{_OPEN}{_CLOSE}]*?){_HREF}(?P<href>[^{_CLOSE}]*){_CLOSE}")
_LINK_LINE = re.compile(
    rf"^{_OPEN}(?P<text>[^{_OPEN}{_CLOSE}]*?\w[^{_OPEN}{_CLOSE}]*?)"
    rf"{_HREF}(?P<href>[^{_CLOSE}]*){_CLOSE}$"
)


# DocBook's admonitions (the PostgreSQL manual's): `<div class="note"><h3 class="title">Note</h3>`
_ADMONITIONS = frozenset({"note", "tip", "warning", "caution", "important"})


def _admonition(heading: lxml.html.HtmlElement) -> bool:
    """A heading that is an admonition's label (`Note`, `Tip`, `Warning`): not a section of its
    own, so a note stays in the section it annotates instead of making 'Note' a section."""
    parent = heading.getparent()
    return (
        parent is not None
        and parent.tag == "div"
        and not _ADMONITIONS.isdisjoint((parent.get("class") or "").split())
    )


def _squash(text: str) -> str:
    return _SPACES.sub(" ", text).strip()


@dataclass
class _Walk:
    """Blocks in document order: inline text gathers into lines, lines into paragraphs."""

    blocks: list[Block] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    inline: list[str] = field(default_factory=list)
    lists: list[list[int]] = field(default_factory=list)  # open lists: [items so far, ordered]
    links: list[tuple[int, str]] = field(default_factory=list)  # open <a href>: (inline at, href)
    marker: str = ""  # the open list item's `- ` / `2. `, indented by depth, until its first line
    label: str = ""  # an admonition's `Note: `, until the first line of what it says
    term: bool = False  # the label is a definition list's term (`<dt>`), awaiting its `<dd>`

    def text(self, text: str | None) -> None:
        if text:
            self.inline.append(text)

    def end_line(self) -> None:
        line = _squash("".join(self.inline))
        self.inline = []
        if not line:  # (an item's marker waits for its text: `<li><p>…`)
            return
        whole = _LINK_LINE.match(line)
        if whole is not None:  # a line that is one link: a TOC or site-map entry, kept as one
            line = f"[{whole['text'].strip()}]({whole['href']})"
        else:
            line = _LINK.sub(lambda link: link["text"], line)
        if line.strip():
            self.lines.append(self.marker + self.label + line)
            self.marker = self.label = ""
            self.term = False

    def end_paragraph(self) -> None:
        self.end_line()
        if self.lines:
            self.blocks.append(Block("\n".join(self.lines)))
            self.lines = []

    def end_term(self) -> None:
        """A `<dt>` read: its text waits as the label of its `<dd>`'s first line (`--soft: Does
        not touch the index file…`, `work_mem: Sets the base maximum…`), so that what a term
        means is one sentence that names it; several terms of one `<dd>` are joined (`-q,
        --quiet: …`)."""
        term = _LINK.sub(lambda link: link["text"], _squash("".join(self.inline)))
        self.inline = []
        if not term:
            return
        if self.term and self.label:
            term = f"{self.label.rstrip().removesuffix(':')}, {term}"
        # a term that is a sentence or a question (a FAQ's) is followed, not labelled
        self.label = f"{term} " if term[-1] in ".?!:" else f"{term}: "
        self.term = True

    def unlabelled(self) -> None:
        """Before a block that takes no label (code, a table, a heading, another list's
        term): a term still waiting is its own paragraph, as it was written."""
        if self.term and self.label:
            self.blocks.append(Block(self.label.rstrip().removesuffix(":")))
        self.label, self.term = ("", False) if self.term else (self.label, False)

    def start(self, element: lxml.html.HtmlElement) -> bool:
        """Handle an opening tag; True when its content was taken whole (skip the subtree)."""
        tag = element.tag
        if not isinstance(tag, str):  # a comment or processing instruction
            return True
        if tag == "dt":
            self.end_line() if self.lists else self.end_paragraph()
        if tag in _HEADINGS:
            self.end_paragraph()
            self.unlabelled()
            title = clean_heading(_squash(element.text_content()))
            if title and _admonition(element):
                self.label = f"{title}: "  # what it says belongs to the section around it
            elif title:  # written as Markdown, so a page's text shows it as a heading
                level = _HEADINGS[tag]
                self.blocks.append(Block(f"{'#' * level} {title}", heading=title, level=level))
            return True
        if tag == "pre":
            self.end_paragraph()
            self.unlabelled()
            code = element.text_content().strip("\n")
            if code.strip():  # fenced, as in Markdown: code is never read as sentences
                fence = "````" if "```" in code else "```"
                self.blocks.append(Block(f"{fence}\n{code}\n{fence}"))
            return True
        if tag == "table":
            self.end_paragraph()
            self.unlabelled()
            self._table(element)
            return True
        if tag in _LISTS:
            self.end_line() if self.lists else self.end_paragraph()
            self.unlabelled()
            self.lists.append([0, tag == "ol"])
        elif tag == "li":
            self.end_line()
            if self.lists:
                self.lists[-1][0] += 1
                count, ordered = self.lists[-1]
                indent = "  " * (len(self.lists) - 1)
                self.marker = f"{indent}{count}. " if ordered else f"{indent}- "
        elif tag == "br":
            self.end_line()
        elif tag in _PARAGRAPHS:
            self.end_line() if self.lists else self.end_paragraph()
        elif tag == "a" and element.get("href"):
            self.links.append((len(self.inline), element.get("href", "")))
        elif tag in _INLINE_CODE and "`" not in element.text_content():
            self.inline.append("`")  # closed in `end`: code stays code in a sentence
        self.text(element.text)
        return False

    def _table(self, table: lxml.html.HtmlElement) -> None:
        """A Markdown table: a row a line; a first row of header cells is the header."""
        for number, row in enumerate(table.iter("tr")):
            cells = [cell for cell in row if cell.tag in ("td", "th")]
            texts = [_squash(cell.text_content()).replace("|", "/") for cell in cells]
            if not any(texts):
                continue
            self.lines.append("| " + " | ".join(texts) + " |")
            if number == 0 and all(cell.tag == "th" for cell in cells):
                self.lines.append("|" + "---|" * len(cells))
        self.end_paragraph()

    def end(self, element: lxml.html.HtmlElement) -> None:
        tag = element.tag
        if tag == "a" and element.get("href") and self.links:
            # the link's text, marked so that end_line can tell a line that is only a link
            at, href = self.links.pop()
            text = "".join(self.inline[at:])
            self.inline[at:] = [f"{_OPEN}{text}{_HREF}{href.replace(_CLOSE, '')}{_CLOSE}"]
        elif tag in _INLINE_CODE and "`" not in element.text_content():
            self.inline.append("`")
        elif tag in _LISTS:
            self.lists.pop()
            self.end_line() if self.lists else self.end_paragraph()
            self.marker = ""
        elif tag == "li":
            self.end_line()
            self.marker = ""  # an item without text leaves no marker behind
        elif tag == "dt":
            self.end_term()
        elif tag in _PARAGRAPHS:
            self.end_line() if self.lists else self.end_paragraph()


def html_blocks(root: lxml.html.HtmlElement) -> list[Block]:
    walk = _Walk()
    body = root.find("body")
    top = body if body is not None else root
    walker = lxml.etree.iterwalk(top, events=("start", "end"))
    for event, element in walker:
        if event == "start":
            if walk.start(element):
                walker.skip_subtree()  # its end event still comes, and adds its tail
        else:
            walk.end(element)
            walk.text(element.tail if element is not top else None)
    walk.end_paragraph()
    return walk.blocks


def _source(raw: bytes) -> bytes | str:
    """The bytes when they declare their encoding (`<meta charset>`, an XML declaration), for
    lxml to decode; else UTF-8 text (lxml would guess Latin-1 and garble every accent)."""
    head = raw[:2048].lower()
    if b"charset" in head or b"encoding=" in head:
        return raw
    return raw.decode("utf-8-sig", errors="replace")


@dataclass(frozen=True)
class HtmlReader:
    drop: tuple[str, ...] = ()  # the corpus's own furniture, CSS selectors (`html.drop`)

    def read(self, path: str, raw: bytes) -> Document:
        if not raw.strip():
            return Document(path, "", "html", read_blocks=())
        try:
            root = lxml.html.document_fromstring(_source(raw))
        except (lxml.etree.ParserError, ValueError) as error:
            raise CorpusError(f"{path}: not readable as HTML ({error})") from None
        for element in root.xpath(_DROP_XPATH):
            element.drop_tree()
        drop_furniture(root, self.drop)
        title = root.findtext(".//title") or ""
        blocks = tuple(
            Block(normalize(b.text), normalize(b.heading) if b.heading else None, b.level)
            for b in html_blocks(root)
        )
        return Document(path, "", "html", normalize(_squash(title)), read_blocks=blocks)


READER = HtmlReader()
