"""Shared lexical helpers: tokens, stop words, a light stemmer and a task's content words.

The engine takes a task's `important_words` from `content_words`, the offline LLM provider and
the retrieval layer compare texts with the same helpers, so "covered" means the same thing
everywhere. Deliberately simple and deterministic: no model, no locale, no randomness.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from functools import lru_cache
from itertools import pairwise

# --- the normal form ----------------------------------------------------------------------------

# Dropped: soft hyphens, zero-width spaces and joiners, word joiners, byte-order marks, the
# invisible operators and bidirectional marks. Other spaces (NBSP, thin, em, ideographic …) become
# a plain space; NFKC does most of that, this table does the rest in the same pass.
_INVISIBLE = "\u00ad\u180e\u200b\u200c\u200d\u200e\u200f\u2060\u2061\u2062\u2063\u2064\ufeff"
_TRANSLATION: dict[int, str | None] = {ord(ch): None for ch in _INVISIBLE}
_TRANSLATION.update(
    {
        ord(ch): " "
        for ch in "\u00a0\u1680\u2000\u2001\u2002\u2003\u2004"
        "\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000"
    }
)
_TRANSLATION.update({ord("\u2028"): "\n", ord("\u2029"): "\n\n", ord("\r"): "\n"})
# the hyphen and the non-breaking hyphen (web pages keep `K‑200` on one line with it) are the
# ASCII hyphen-minus, so that a model number matches however it was typeset
_TRANSLATION.update({ord("\u2010"): "-", ord("\u2011"): "-"})


def normalize(text: str) -> str:
    """Text in runner's one normal form, which every page and every message is put in before it
    is indexed or matched: Unicode NFKC (ligatures, full-width forms and compatibility spaces
    become their plain characters), any other odd space a plain space, soft hyphens and
    zero-width characters dropped, the Unicode hyphens (U+2010, the non-breaking U+2011) as
    `-`, line and paragraph separators (and CR) as line breaks.
    Plain ASCII without CR is returned as it is (the common case costs one scan)."""
    if text.isascii() and "\r" not in text:
        return text
    return unicodedata.normalize("NFKC", text.replace("\r\n", "\n").translate(_TRANSLATION))


def visible(text: str) -> str:
    """The text with every character that does not show (or looks like a space but is not one)
    written as its code point: `word\u00a0word` shows as `word<U+00A0>word`. For diffs."""
    return "".join(ch if _shows(ch) else f"<U+{ord(ch):04X}>" for ch in text)


def _shows(ch: str) -> bool:
    if ch in " \n\t" or (ch.isascii() and ch.isprintable()):
        return True
    category = unicodedata.category(ch)
    return category[0] not in "CZ"  # C: controls, format chars (ZWSP, SHY); Z: odd spaces


# A token: a run of letters/digits, possibly joined by inner dashes, dots or apostrophes
# ("XR-200", "v2.1", "don't"). Anything else is punctuation.
_WORD = re.compile(r"[^\W_]+(?:[-.'’][^\W_]+)*", re.UNICODE)
_POSSESSIVE = re.compile(r"'s$", re.IGNORECASE)
# For token estimates: words as above, plus each punctuation character as its own token.
_TOKEN_ESTIMATE = re.compile(r"[^\W_]+|[^\w\s]", re.UNICODE)

_STOP_WORDS_TEXT = """
    a about above after again against all also am an and any are aren't as at be because been
    before being below between both but by can can't cannot could couldn't did didn't do does
    doesn't doing don't down during each either else etc even ever every few for from further
    get gets got had many hadn't has hasn't have haven't having he he'd he'll he's her here here's
    hers herself him himself his how how's however i i'd i'll i'm i've if in into is isn't it
    it's its itself just let's like may me might more most much must mustn't my myself need
    neither no nor not now of off often on once only or other ought our ours ourselves out over
    own per please rather really same shall shan't she she'd she'll she's should shouldn't so
    some such than that that's the their theirs them themselves then there there's these they
    they'd they'll they're they've this those though through thus to too under until up upon
    us use used using very via was wasn't we we'd we'll we're we've were weren't what what's
    when when's where where's whether which while who who's whom whose why why's will with
    within without won't would wouldn't yes yet you you'd you'll you're you've your yours
    yourself yourselves tell know want give show explain describe find
"""
STOP_WORDS: frozenset[str] = frozenset(_STOP_WORDS_TEXT.split())
# After "how", these ask for a quantity ("how long is the warranty?") rather than name a topic.
_HOW_DEGREE_TEXT = "long often far big large small old tall high heavy wide fast soon early late"
HOW_DEGREE_WORDS = frozenset(_HOW_DEGREE_TEXT.split())

# Suffixes stripped by `stem`, longest first; each must leave a stem of at least 3 letters.
_SUFFIXES: tuple[str, ...] = (
    "ations",
    "ation",
    "ments",
    "ment",
    "ness",
    "ings",
    "ing",
    "ions",
    "ion",
    "ers",
    "ity",
)
_SUFFIXES_SHORT: tuple[str, ...] = ("er", "ed", "ly")
_MIN_STEM = 3


def tokenize(text: str) -> list[str]:
    """Lower-cased word tokens in order, duplicates kept; a possessive 's is dropped."""
    tokens = _WORD.findall(text.lower())
    if "'" in text or "’" in text:
        tokens = [_POSSESSIVE.sub("", token.replace("’", "'")) for token in tokens]
    return tokens


def words(text: str) -> list[str]:
    """Word tokens in their original case, in order (for names and model numbers)."""
    return [word for _, _, word in word_spans(text)]


def word_spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, word) for every word token, original case, possessive 's dropped."""
    return [
        (m.start(), m.end(), _POSSESSIVE.sub("", m.group(0).replace("’", "'")))
        for m in _WORD.finditer(text)
    ]


def is_stop_word(word: str) -> bool:
    return word.lower() in STOP_WORDS


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A light suffix-stripping stemmer, so that related forms meet.

    "batteries"/"battery" -> "battery", "charging"/"charge"/"charged"/"charger" -> "charg",
    "classes"/"class" -> "class", "fees"/"fee" -> "fee". Only plural, verb and adverb endings
    are stripped, never below three letters (a four-letter word loses only a plural s); the
    result need not be a word. Tokens with digits (model numbers, versions) are kept whole.
    """
    word = word.lower()
    if any(ch.isdigit() for ch in word) or len(word) <= _MIN_STEM:
        return word
    if len(word) == _MIN_STEM + 1:  # "fees", "days", "kits": only a plural s comes off
        return _drop_plural_s(word)
    if word.endswith(("ies", "ied")):
        return word[:-3] + "y"
    if word.endswith(("ibility", "ability")):
        return word[:-5] + "l"  # "compatibility" meets "compatible" (-> "compatibl")
    for suffix in (*_SUFFIXES, *_SUFFIXES_SHORT):
        if word.endswith(suffix) and len(word) - len(suffix) >= _MIN_STEM:
            return _undouble(_drop_final_e(word[: -len(suffix)]))
    return _drop_final_e(_drop_plural_s(word))


def _drop_plural_s(word: str) -> str:
    if word.endswith(("sses", "xes", "zes", "ches", "shes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _undouble(word: str) -> str:
    # "running" -> "runn" -> "run"; "filling" keeps its "ll" ("fill")
    last = word[-1]
    doubled = len(word) > _MIN_STEM and word[-2] == last and last not in "lsz" + "aeiou"
    return word[:-1] if doubled else word


def _drop_final_e(word: str) -> str:
    # "charge" and "charg(ing)" meet; short words ("note", "use") keep their e
    return word[:-1] if word.endswith("e") and len(word) > _MIN_STEM + 1 else word


def content_words(text: str) -> list[str]:
    """The words that carry meaning: no stop words, no one-letter tokens, and not the degree
    word of a "how …" question ("how long", "how often": they ask for a quantity, and answers
    rarely repeat them); lower-cased, in order of first appearance, without duplicates (by stem,
    so "battery" and "batteries" count once)."""
    seen: set[str] = set()
    result: list[str] = []
    previous = ""
    for token in tokenize(text):
        asked_degree = previous == "how" and token in HOW_DEGREE_WORDS
        previous = token
        if asked_degree or is_stop_word(token) or (len(token) < 2 and not token.isdigit()):
            continue
        key = stem(token)
        if key not in seen:
            seen.add(key)
            result.append(token)
    return result


def stems(text_or_words: str | Iterable[str]) -> set[str]:
    """The stems of a text's content words (or of the given words)."""
    items = content_words(text_or_words) if isinstance(text_or_words, str) else text_or_words
    return {stem(item) for item in items}


def coverage(required: Iterable[str], text: str) -> float:
    """The share of `required` words whose stem appears in `text`; 1.0 when none are required."""
    wanted = [stem(word) for word in required]
    if not wanted:
        return 1.0
    present = token_stems(text)
    return sum(1 for word in wanted if word in present) / len(wanted)


def token_stems(text: str) -> set[str]:
    """The stems of every token of a text, stop words included (for "does it contain …")."""
    return {stem(token) for token in set(tokenize(text))}


def estimate_tokens(text: str) -> int:
    """A tokenizer-free estimate: words plus punctuation marks (close to BPE counts for prose)."""
    return len(_TOKEN_ESTIMATE.findall(text))


# Where prose may end a sentence: after . ! ? (and any closing quotes or brackets), before
# whitespace and a capital, a digit, an opening quote or bracket. Paragraph breaks and line
# breaks before list items always end one. `sentences` then vetoes the ends that follow an
# abbreviation or fall inside square brackets (a citation such as "[manual.md p. 3]").
_SENTENCE_END = re.compile(
    r"[.!?][\"'”’)\]]*(?P<gap>\s+)(?=[\"'“‘(\[]?[A-Z0-9])|(?P<para>\n\s*\n|\n(?=\s*[-*#\d]+[.)]?\s))"
)
_LIST_MARKER = re.compile(r"^(?:\d{1,3}|[a-zA-Z])[.)]$")
# The word just before a full stop (letters and inner dots: "e.g", "approx", "p").
_WORD_BEFORE_DOT = re.compile(r"(?:^|[\s(\[\"'“])([^\W\d_]+(?:\.[^\W\d_]+)*)\.[\"'”’)\]]*$")

# Abbreviations after which a full stop never ends a sentence.
_ABBREVIATIONS_TEXT = """
    e.g i.e cf vs viz approx appr incl excl esp resp al ca mr mrs ms dr prof st jr sr
    fig figs eq eqs dept est inc ltd corp co bros
"""
ABBREVIATIONS: frozenset[str] = frozenset(_ABBREVIATIONS_TEXT.split())
# Abbreviations that stand before a number ("p. 5", "No. 3", "approx. 20", "Fig. 2").
_NUMBER_ABBREVIATIONS_TEXT = "p pp no nos nr vol vols ch chap sec sect art para ref tel ext v"
NUMBER_ABBREVIATIONS: frozenset[str] = frozenset(_NUMBER_ABBREVIATIONS_TEXT.split())


def sentences(text: str) -> list[str]:
    """Split prose into sentences (and paragraphs/list items), trimmed, empties dropped.

    A sentence ends at . ! or ? before a space and a capital, a digit, a quote or a bracket.
    A full stop after an abbreviation does not end one ("e.g. Kestrel", initials such as
    "J. Smith"), nor one after "p.", "No.", "vol." … before a number ("p. 5", "No. 3"), nor one
    inside square brackets (a citation). "etc." is no exception: before a capital it ends the
    sentence. Decimals and model numbers ("3.5", "v2.1") have no space after their dot, so they
    are never cut. A bare list marker ("1.") stays with the sentence after it."""
    cuts = [0]
    brackets = _bracket_spans(text)
    for match in _SENTENCE_END.finditer(text):
        if match.group("para") is None:
            if _inside(match.start(), brackets) or _after_abbreviation(text, match):
                continue
            cuts.append(match.start("gap"))
        else:
            cuts.append(match.start())
    cuts.append(len(text))
    parts = [text[start:end].strip() for start, end in pairwise(cuts)]
    merged: list[str] = []
    for part in filter(None, parts):
        if merged and _LIST_MARKER.match(merged[-1]):
            merged[-1] = f"{merged[-1]} {part}"
        else:
            merged.append(part)
    return merged


def _after_abbreviation(text: str, end: re.Match[str]) -> bool:
    """Whether the full stop that `end` starts at closes an abbreviation, not a sentence."""
    if text[end.start()] != ".":
        return False
    found = _WORD_BEFORE_DOT.search(text, max(0, end.start() - 40), end.start("gap"))
    if not found:
        return False
    word = found.group(1)
    lowered = word.lower()
    following = text[end.end("gap") : end.end("gap") + 1]
    if lowered in ABBREVIATIONS:
        return True
    if lowered in NUMBER_ABBREVIATIONS and following.isdigit():
        return True
    return len(word) == 1 and word.isupper()  # an initial: "J. Smith", "Plan B. Then" is rare


def _bracket_spans(text: str) -> list[tuple[int, int]]:
    """Start and end of every [...] without nested brackets or line breaks."""
    return [(m.start(), m.end()) for m in re.finditer(r"\[[^\[\]\n]*\]", text)]


def _inside(position: int, spans: list[tuple[int, int]]) -> bool:
    return any(start < position < end for start, end in spans)
