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

Selectors are read by cssselect (lxml's own CSS support). Those without combinators — nearly
all — are tested in one walk over the page; the others run as XPath, one pass each.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache

import lxml.etree
import lxml.html
from cssselect import HTMLTranslator, parse
from cssselect.parser import Attrib, Class, Element, Hash

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


@dataclass(frozen=True)
class _Compound:
    """A selector without combinators (`div.tabs`, `#quickview`, `[id^=navrow]`), matched in
    Python: one walk over a page tests every such selector. libxml2's XPath engine makes a pass
    a selector: the defaults as XPath took 3.5 to 6 s over the Apache manual's 244 pages (on
    a loaded two-core machine), the walk adds about 0.7 s to the 2.7 s of reading them."""

    tag: str | None = None
    id: str | None = None
    classes: frozenset[str] = frozenset()
    attributes: tuple[tuple[str, str, str], ...] = ()  # (name, operator, value)

    def matches(self, element: lxml.etree._Element) -> bool:
        if self.tag is not None and element.tag != self.tag:
            return False
        if self.id is not None and element.get("id") != self.id:
            return False
        if self.classes and not self.classes <= set((element.get("class") or "").split()):
            return False
        return all(_attribute(element.get(name), op, value) for name, op, value in self.attributes)


def _attribute(found: str | None, operator: str, value: str) -> bool:
    if found is None:
        return False
    return {
        "exists": True,
        "=": found == value,
        "^=": bool(value) and found.startswith(value),
        "$=": bool(value) and found.endswith(value),
        "*=": bool(value) and value in found,
        "~=": value in found.split(),
        "|=": found == value or found.startswith(value + "-"),
    }.get(operator, False)


def _compound(tree: object) -> _Compound | None:
    """The compound a parsed selector is, or None for one with combinators or pseudo-classes
    (matched by XPath instead)."""
    found = _Compound()
    while not isinstance(tree, Element):
        if isinstance(tree, Hash):
            found = replace(found, id=tree.id)
        elif isinstance(tree, Class):
            found = replace(found, classes=found.classes | {tree.class_name})
        elif isinstance(tree, Attrib) and tree.namespace is None:
            value = tree.value.value if tree.value is not None else ""
            attribute = (tree.attrib.lower(), tree.operator, str(value))
            found = replace(found, attributes=(*found.attributes, attribute))
        else:
            return None
        tree = tree.selector
    if tree.namespace is not None:
        return None
    return replace(found, tag=tree.element.lower() if tree.element else None)


@dataclass
class _Selectors:
    """Compounds filed by what each names first (its id, else a class, else its tag, else an
    attribute), so an element is tested only against those that can match it; and the XPaths
    of the others."""

    by_id: dict[str, list[_Compound]] = field(default_factory=dict)
    by_class: dict[str, list[_Compound]] = field(default_factory=dict)
    by_tag: dict[str, list[_Compound]] = field(default_factory=dict)
    by_attribute: dict[str, list[_Compound]] = field(default_factory=dict)  # `[role=search]`
    anywhere: list[_Compound] = field(default_factory=list)  # `*`
    xpaths: list[lxml.etree.XPath] = field(default_factory=list)

    def add(self, compound: _Compound) -> None:
        if compound.id is not None:
            self.by_id.setdefault(compound.id, []).append(compound)
        elif compound.classes:
            self.by_class.setdefault(min(compound.classes), []).append(compound)
        elif compound.tag is not None:
            self.by_tag.setdefault(compound.tag, []).append(compound)
        elif compound.attributes:
            self.by_attribute.setdefault(compound.attributes[0][0], []).append(compound)
        else:
            self.anywhere.append(compound)

    def matches(self, element: lxml.etree._Element) -> bool:
        tag = element.tag if isinstance(element.tag, str) else ""
        candidates = [*self.anywhere, *self.by_tag.get(tag, ())]
        for attribute in element.attrib:
            candidates += self.by_attribute.get(attribute, ())
        if (found := element.get("id")) is not None:
            candidates += self.by_id.get(found, ())
        for name in (element.get("class") or "").split():
            candidates += self.by_class.get(name, ())
        return bool(candidates) and any(compound.matches(element) for compound in candidates)


@lru_cache(maxsize=32)
def _compiled(selectors: tuple[str, ...]) -> _Selectors:
    translator = HTMLTranslator()
    compiled = _Selectors()
    for text in (*selectors, *(f".{name}" for name in PERMALINK_CLASSES)):
        for selector in parse(text):
            compound = None if selector.pseudo_element else _compound(selector.parsed_tree)
            if compound is not None:
                compiled.add(compound)
            else:
                compiled.xpaths.append(lxml.etree.XPath(translator.selector_to_xpath(selector)))
    return compiled


def drop_furniture(root: lxml.html.HtmlElement, extra: Sequence[str] = ()) -> None:
    """Remove the site's furniture from a parsed page, in place: the default bars, the corpus's
    own (`extra`, CSS selectors) and permalinks. Each element's tail (the text after it) stays."""
    selectors = _compiled(DEFAULT_DROP + tuple(extra))
    found = [
        element
        for element in root.iter()
        if isinstance(element.tag, str)
        and (selectors.matches(element) or (element.tag == "a" and is_mark(element.text_content())))
    ]
    for xpath in selectors.xpaths:
        found.extend(xpath(root))
    for element in found:
        if _attached(element, root):  # not already gone with an ancestor
            element.drop_tree()


def _attached(element: lxml.etree._Element, root: lxml.etree._Element) -> bool:
    while element is not root:
        parent = element.getparent()
        if parent is None:
            return False
        element = parent
    return True


def is_mark(text: str) -> bool:
    """Whether a text is nothing but permalink marks (and spaces): `¶`, ` # `, `🔗︎`."""
    shown = [ch for ch in text if not ch.isspace() and ch not in _INVISIBLE]
    return bool(shown) and all(ch in MARKS for ch in shown)


def clean_heading(title: str) -> str:
    """A heading's text without the marks a generator left at its end (`Forcing HTTPS ¶`);
    a `#` or a `§` only when it stands apart, so `C#` stays `C#`."""
    return _TRAILING_MARKS.sub("", title).strip()
