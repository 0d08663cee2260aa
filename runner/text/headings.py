"""A heading as an author reads it: the one key every comparison of an expected heading with a
page's heading goes through (`runner eval`'s gold sources, `runner test`'s `sources`, the
benchmarks' gold sections).

Two headings are the same when their keys are: case, spacing and punctuation aside, a permalink
mark aside (the `¶`, `#`, `🔗` or `§` a manual's HTML puts beside its headings — "Forcing HTTPS ¶"
is "Forcing HTTPS"), and a section number before the heading aside ("11.2. Index Types",
"Chapter 26. Backup" are "Index Types", "Backup").
"""

from __future__ import annotations

import re
import unicodedata

# a section number before an HTML heading ("11.2. Index Types", "Chapter 26. Backup")
_SECTION_NUMBER = re.compile(r"^(?:(?:Chapter|Appendix|Part)\s+)?[0-9A-Z]+(?:\.[0-9A-Z]+)*\.\s+")
# what a manual's HTML sets beside a heading to link to it; stripped from both ends first so
# that a section number behind a leading mark ("§ 4.2. Limits") is still seen
_MARKS = "¶#§\U0001f517\ufe0f"


def heading_key(heading: str) -> str:
    """The heading's comparison key: NFKC, permalink marks and a leading section number
    dropped, every run of characters that are not letters or digits one space, case folded."""
    text = unicodedata.normalize("NFKC", heading).strip()
    text = text.strip(_MARKS + " \t\n").strip()
    text = _SECTION_NUMBER.sub("", text)
    words = "".join(ch if _is_word(ch) else " " for ch in text)
    key = " ".join(words.split()).casefold()
    return key or " ".join(text.split()).casefold()  # all punctuation: compare it as written


def same_heading(wanted: str, heading: object) -> bool:
    """Whether a page's heading is the expected one (see heading_key)."""
    return heading is not None and heading_key(wanted) == heading_key(str(heading))


def _is_word(ch: str) -> bool:
    return unicodedata.category(ch)[0] in "LN"
