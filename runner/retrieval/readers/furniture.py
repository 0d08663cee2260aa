"""A site's furniture: what an HTML page carries around its content — menu bars, breadcrumbs,
language bars, sidebars, footers, skip links — and the permalink marks after its headings.

None of it answers a question, and all of it is on every page, so a search would find it
everywhere and an answer would quote it ("Modules | Directives | FAQ | …"). The HTML reader
drops it before it walks the page:

- the elements `DEFAULT_DROP` names (CSS selectors: the bars of the documentation generators
  runner has been used on, and the site frame HTML and ARIA mark), with those the corpus adds
  in `html.drop` (its own bars, by CSS selector: `["#masthead", "div.crumbs"]`);
- permalinks: an element of a permalink class (`headerlink`, `permalink`) and any link whose
  whole text is permalink marks (¶, §, #, 🔗, ⚓), wherever they are; and marks left at the end
  of a heading's text.

Selectors are read by cssselect (lxml's own CSS support) and compiled into one XPath once per
list, so dropping costs one pass of libxml2's XPath engine over a page per selector.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

import lxml.etree
from cssselect import HTMLTranslator

# Each line: what it is, and whose. A selector only drops elements outside the page's content
# in the generators named; a generic class (`.footer`) is one every such site uses for its frame.
DEFAULT_DROP: tuple[str, ...] = (
    # the frame of any site (ARIA roles; `header`, `footer`, `aside` are html.py's: in an
    # article or a section they are its own)
    "nav",
    "[role=navigation]",
    "[role=banner]",
    "[role=contentinfo]",
    "[role=search]",
    "#header",
    "#footer",
    "#sidebar",
    "#navigation",
    ".navbar",
    ".breadcrumb",
    ".breadcrumbs",
    ".sidebar",
    ".footer",
    # skip links ("Skip to content")
    ".skip-link",
    ".skip-links",
    ".skiplink",
    ".skipnav",
    ".skip-nav",
    ".skip-to-content",
    # the Apache HTTP Server manual: menu bar, breadcrumbs, quick view, language bars, comments
    "#page-header",
    "div#path",
    "#quickview",
    ".toplang",
    ".bottomlang",
    "#comments_section",
    # Sphinx (and Read the Docs, furo): related bars, sidebars, footers, breadcrumbs
    ".related",
    ".sphinxsidebar",
    ".rst-footer-buttons",
    ".rst-versions",
    ".wy-nav-side",
    ".wy-nav-top",
    ".wy-breadcrumbs",
    ".sidebar-drawer",
    ".toc-drawer",
    ".related-pages",
    ".mobile-header",
    # MkDocs (Material and the default theme)
    ".md-header",
    ".md-tabs",
    ".md-sidebar",
    ".md-footer",
    ".md-search",
    ".md-skip",
    ".bs-sidebar",
    # Javadoc (before and since JDK 9's new layout)
    ".topNav",
    ".subNav",
    ".bottomNav",
    ".skipNav",
    ".top-nav",
    ".sub-nav",
    ".bottom-nav",
    ".skip-nav",
    ".legalCopy",
    # Doxygen: title area, navigation rows and tree, search box, the header's summary links,
    # the footer
    "#titlearea",
    "[id^=navrow]",
    "div.tabs",
    ".navpath",
    "#nav-path",
    "#side-nav",
    "#nav-tree",
    "#MSearchBox",
    "#MSearchSelectWindow",
    "#MSearchResultsWindow",
    "div.header div.summary",
    "address.footer",
    # DocBook (the PostgreSQL manual, …): the navigation headers and footers
    ".navheader",
    ".navfooter",
)

# classes of the permalink after a heading (Sphinx, MkDocs: `headerlink`; the Apache manual:
# `permalink`), dropped whatever their text
PERMALINK_CLASSES = ("headerlink", "permalink")
# a permalink's mark: what a link shows when it is nothing but a link to its own place
MARKS = frozenset("¶§#🔗⚓")
_INVISIBLE = frozenset("\ufe0e\ufe0f\u200b\u200c\u200d\u2060")  # variation selectors, joiners
_TRAILING_MARKS = re.compile(r"(?:\s+[¶§#🔗⚓][\ufe0e\ufe0f]?)+\s*$|\s*[¶🔗⚓][\ufe0e\ufe0f]?\s*$")


@lru_cache(maxsize=32)
def _compiled(selectors: tuple[str, ...]) -> lxml.etree.XPath:
    translator = HTMLTranslator()
    paths = [translator.css_to_xpath(selector) for selector in selectors]
    classes = [translator.css_to_xpath(f".{name}") for name in PERMALINK_CLASSES]
    return lxml.etree.XPath(" | ".join(paths + classes))


def drop_furniture(root: lxml.etree._Element, extra: Sequence[str] = ()) -> None:
    """Remove the site's furniture from a parsed page, in place: the default bars, the corpus's
    own (`extra`, CSS selectors) and permalinks. Each element's tail (the text after it) stays."""
    for element in _compiled(DEFAULT_DROP + tuple(extra))(root):
        if element.getparent() is not None:  # not already gone with an ancestor
            element.drop_tree()
    for link in list(root.iter("a")):
        if is_mark(link.text_content()) and link.getparent() is not None:
            link.drop_tree()


def is_mark(text: str) -> bool:
    """Whether a text is nothing but permalink marks (and spaces): `¶`, ` # `, `🔗︎`."""
    shown = [ch for ch in text if not ch.isspace() and ch not in _INVISIBLE]
    return bool(shown) and all(ch in MARKS for ch in shown)


def clean_heading(title: str) -> str:
    """A heading's text without the marks a generator left at its end (`Forcing HTTPS ¶`);
    a `#` or a `§` only when it stands apart, so `C#` stays `C#`."""
    return _TRAILING_MARKS.sub("", title).strip()
