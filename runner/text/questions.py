"""What a question asks, lexically: its parts and the kind of answer each part wants. Shared by
the offline answerer (runner.llm.providers) and retrieval (a `retrieve` tool searches a part
that the whole question's pages leave out), so it lives below both.

- **Parts**: a question is cut into clauses at `?`, `;` and line breaks; where `and`, `or`,
  `but` or a comma is followed by a question word or an auxiliary ("…stocked, and what is the
  fee?", "…a motorbike, and can I claim…"); and where a comma and `and` are followed by a
  determiner ("…battery last, and the warranty?"). "spare parts and accessories" and "for a
  KW-720X and a KT-810HX" stay one part. A piece without content words is dropped.
- **Cues** of a part, from its wording (general English, nothing about a corpus):
  - `quantity` — "how many/much/long/often/far/old/…", or a word that names an amount (fee,
    price, cost, rate, number, capacity, duration, …): wants numbers, amounts, durations;
  - `time` — "when", "what date/time/day/year", "how soon", "deadline": wants dates, times,
    weekdays, months, years, durations;
  - `polar` — a yes/no question, starting with an auxiliary or modal ("can I…", "is it…",
    "does…"): wants the sentence with the modal or the negation (can, cannot, may, must, not,
    only, allowed, unless, …);
  - `reason` — "why": wants because, since, due to, so that, reason, cause, …
- **Values** a part that asks a quantity asks for (`Part.values`, from its words): `money`
  ("fee", "price", "cost", "charge", "pay"), `duration` ("how long", "how many years/days/…",
  "what is the … period"), `percent` ("percentage", "percent") and, for another "how many/much/…",
  `number`; a unit states a value of a kind (`unit_values`) when it holds an amount with a
  currency ("€65", "15 EUR", "free of charge"), a number of a time unit ("10 years",
  "three weeks"), a percentage ("60%"), or any number (asked by "how many/much/…" alone:
  "convert a string to a number" or "speed up a script" ask for no number). A unit that
  states the value asked is preferred over one that only names the thing (extractive, rule 1).
- **What it asks about**: the term a "What is X?" question wants defined (`defined_term`, and
  whether a text `defines` it) and the names it asks about (`names`: `KW-620`, `os.path`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from runner.text.words import STOP_WORDS, content_words, stem, tokenize

QUANTITY, TIME, POLAR, REASON = "quantity", "time", "polar", "reason"

_QUESTION_WORDS = "what|how|when|where|which|who|whom|whose|why"
_AUXILIARIES = (
    "can|could|may|might|must|shall|should|will|would|is|are|am|was|were|do|does|did|has|have|"
    "had|isn't|aren't|doesn't|don't|didn't|can't|won't"
)
_DETERMINERS = "the|a|an|its|their|your|my|our|this|that|these|those"
_PART_BREAK = re.compile(
    rf"[?;\n]+|,?\s+(?:and|or|but|also)\s+(?=(?:{_QUESTION_WORDS}|{_AUXILIARIES})\b)"
    rf"|,\s*(?:and|or|but|also)\s+(?=(?:{_DETERMINERS})\b)|,\s*(?=(?:{_QUESTION_WORDS})\b)",
    re.IGNORECASE,
)
_QUESTION_START = re.compile(rf"^(?:{_QUESTION_WORDS})\b", re.IGNORECASE)
_LEADING_JOINERS = re.compile(r"^\W*(?:(?:and|or|but|also|so|then|please)\b\W*)*", re.IGNORECASE)

_HOW_QUANTITY = re.compile(
    r"\bhow\s+(?:many|much|long|often|far|old|big|large|small|heavy|tall|wide|high|deep|fast|"
    r"quickly|soon|early|late|frequently)\b",
    re.IGNORECASE,
)
_AMOUNT_WORDS_TEXT = """
    fee price cost rate amount number percentage percent size capacity duration period limit
    minimum maximum salary allowance deposit discount surcharge weight length width height depth
    temperature speed age distance total budget quantity count frequency interval
"""
AMOUNT_WORDS = frozenset(stem(word) for word in _AMOUNT_WORDS_TEXT.split())
_TIME_QUESTION = re.compile(
    r"\bwhen\b|\bwhat\s+(?:date|time|day|year|month|hour)\b|\bhow\s+soon\b|\bdeadline\b|"
    r"\buntil\s+when\b|\bby\s+when\b",
    re.IGNORECASE,
)
_POLAR_START = re.compile(rf"^(?:{_AUXILIARIES})\b", re.IGNORECASE)
_REASON_QUESTION = re.compile(r"\bwhy\b|\bwhat\s+(?:causes|caused|is\s+the\s+reason)\b", re.I)


def _vocabulary(text: str) -> frozenset[str]:
    return frozenset(text.split())


# What a unit must hold to meet each cue: words (compared as lower-case tokens: a set lookup,
# much faster than one regex alternation per word) and a few patterns.
# "one", "once" and "single" are left out: they are more often a pronoun or an adverb.
_NUMBER_WORDS = _vocabulary(
    """two three four five six seven eight nine ten eleven twelve fifteen twenty thirty forty
    fifty hundred thousand million twice half dozen"""
)
_TIME_WORDS = _vocabulary(
    """january february march april june july august september october november december
    jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday thursday friday
    saturday sunday weekend weekday weekdays daily weekly monthly yearly annually immediately
    today tomorrow"""
)
_DURATION_WORDS = _vocabulary(
    "second seconds minute minutes hour hours day days week weeks month months year years"
)
_POLAR_WORDS = _vocabulary(
    """can cannot can't could couldn't may must mustn't not no never only allowed permitted
    required prohibited forbidden unless except should shouldn't possible won't don't
    doesn't isn't aren't"""
)
_REASON_WORDS = _vocabulary("because since reason reasons cause causes caused therefore thus means")
_REASON_PHRASES = ("due to", "so that", "in order to", "as a result")
_YEAR_OR_CLOCK = re.compile(r"\b(?:1[89]|20)\d\d\b|\b\d{1,2}[:.]\d{2}\b")
_AMOUNT_SIGNS = frozenset("0123456789€$£¥%")


# Words that frame a question rather than name its topic ("what is the difference between…",
# "what does … mean", "is there a way to…"): they weigh half.
_FRAMING_TEXT = (
    "difference differences different differ compare comparison mean meaning way ways example"
)
FRAMING_STEMS = frozenset(stem(word) for word in _FRAMING_TEXT.split())
# Words that ask for a comparison: table rows it finds are compared field by field
_COMPARING_TEXT = "difference differences differ differs different compare comparison versus vs"
COMPARING_STEMS = frozenset(stem(word) for word in _COMPARING_TEXT.split())


def compares(question: str) -> bool:
    """The question asks how things differ ("difference between", "compare", "vs")."""
    return any(stem(word) in COMPARING_STEMS for word in tokenize(question))


# --- the values a question asks for, and the values a unit states ------------------------------

MONEY, DURATION, PERCENT, NUMBER = "money", "duration", "percent", "number"


def _stems_of(text: str) -> frozenset[str]:
    return frozenset(stem(word) for word in text.split())


_MONEY_WORDS = _stems_of(
    "fee price cost charge charged surcharge deposit pay paid payment tariff rate refund excess"
)
_DURATION_WORDS_ASKED = _stems_of(
    "duration period year month week day hour minute second years months weeks days hours"
)
_PERCENT_WORDS = _stems_of("percentage percent proportion")
_ASKING = re.compile(r"^\s*(?:what|how|which)\b", re.IGNORECASE)
_HOW_LONG = re.compile(
    r"\bhow\s+(?:long|many\s+(?:years|months|weeks|days|hours|minutes|seconds)|soon)\b", re.I
)


@dataclass(frozen=True)
class Part:
    """One part of a question (`parts`: a question may ask several things): its words."""

    text: str
    words: tuple[str, ...]  # content words, in order
    stems: frozenset[str]
    cues: frozenset[str]
    values: frozenset[str] = frozenset()  # the kinds of value it asks for (money, duration, …)


@lru_cache(maxsize=1024)
def parts(question: str) -> tuple[Part, ...]:
    """The question's parts, in order; one part for a simple question, none without words."""
    found: list[Part] = []
    for piece in _PART_BREAK.split(question):
        text = _LEADING_JOINERS.sub("", piece).strip()
        words = tuple(content_words(text))
        if not words:
            continue
        cues = _cues(text, words)
        part = Part(text, words, frozenset(stem(w) for w in words), cues, _values(text, cues))
        found.append(part)
    return tuple(found)


def opens_a_question(text: str) -> bool:
    """The sentence is a question as a FAQ writes one: it opens with a question word or an
    auxiliary and ends with `?` ("How do I change it?"; not "However, this raises one problem:
    where should the code go?")."""
    text = text.strip()
    return text.endswith("?") and bool(_QUESTION_START.match(text) or _POLAR_START.match(text))


def asked_parts(question: str) -> tuple[Part, ...]:
    """The parts that are questions of their own: opening with a question word ("what is the
    descaling interval"), or with an auxiliary at the start of a sentence ("Is the KW-620
    quiet?"); not a statement the question leans on ("I run Debian, how do I install it?": "I
    run Debian"), nor a clause an "and" joins ("can I INSERT into a view and have the row go to
    the base table?")."""
    sentences = {_LEADING_JOINERS.sub("", s).strip() for s in re.split(r"[?;\n]+", question)}
    return tuple(
        part
        for part in parts(question)
        if _QUESTION_START.match(part.text)
        or (_POLAR_START.match(part.text) and any(s.startswith(part.text) for s in sentences))
    )


def _cues(text: str, words: tuple[str, ...]) -> frozenset[str]:
    cues = set()
    if _HOW_QUANTITY.search(text) or any(stem(word) in AMOUNT_WORDS for word in words):
        cues.add(QUANTITY)
    if _TIME_QUESTION.search(text):
        cues.add(TIME)
    if _POLAR_START.match(text):
        cues.add(POLAR)
    if _REASON_QUESTION.search(text):
        cues.add(REASON)
    return frozenset(cues)


def _values(text: str, cues: frozenset[str]) -> frozenset[str]:
    """The kinds of value a part asks for, from its words: "what is the fee" asks an amount of
    money, "how many years" a duration; any other quantity cue a number. None without a
    quantity or time cue ("can I pay by card?" asks whether, not how much)."""
    if QUANTITY not in cues and TIME not in cues:
        return frozenset()
    asked = {stem(word) for word in tokenize(text)}
    kinds = set()
    if asked & _PERCENT_WORDS:
        kinds.add(PERCENT)  # "what percentage of the price": the price is what it is of
    elif asked & _MONEY_WORDS:
        kinds.add(MONEY)
    # a duration named is asked for in a question ("what is the warranty period?"), not in a
    # topic ("syntax for a duration like '1 day'")
    named = asked & _DURATION_WORDS_ASKED and _ASKING.search(text)
    if _HOW_LONG.search(text) or (QUANTITY in cues and named):
        kinds.add(DURATION)
    if not kinds and _HOW_QUANTITY.search(text):
        kinds.add(NUMBER)  # "how many arguments"; not "the number of keys", "speed up"
    return frozenset(kinds)


# a value of each kind, as a unit states it: "€65", "15 EUR", "free of charge"; "10 years",
# "three working days", "12-month"; "60%"; any number (`unit_cues`)


_NUMBER_NAMES = _vocabulary(
    """one two three four five six seven eight nine ten eleven twelve fifteen twenty thirty
    forty fifty sixty hundred"""
)
_NUMBER_TEXT = rf"(?:\d+(?:[.,]\d+)*|{'|'.join(sorted(_NUMBER_NAMES))})"
_MONEY_VALUE = re.compile(
    rf"[€$£¥]\s?\d|\d\s?(?:€|\$|£|¥)|\b{_NUMBER_TEXT}\s?(?:eur|euros?|usd|dollars?|gbp|pounds?|"
    r"cents?|pence)\b|\bfree(?:\s+of\s+charge)?\b|\bno\s+charge\b|\bat\s+no\s+cost\b",
    re.IGNORECASE,
)
_DURATION_VALUE = re.compile(
    rf"\b{_NUMBER_TEXT}(?:\s+|-)(?:(?:working|business|calendar|full)\s+)?"
    r"(?:years?|months?|weeks?|days?|hours?|minutes?|seconds?)\b",
    re.IGNORECASE,
)
_PERCENT_VALUE = re.compile(r"\d\s?%|\bper\s?cent\b|\bpercent\b", re.IGNORECASE)


@lru_cache(maxsize=65536)
def unit_values(text: str) -> frozenset[str]:
    """The kinds of value a unit's text states (`Part.values`): an amount of money, a
    duration, a percentage, a number."""
    found = set()
    if _MONEY_VALUE.search(text):
        found.add(MONEY)
    if _DURATION_VALUE.search(text):
        found.add(DURATION)
    if _PERCENT_VALUE.search(text):
        found.add(PERCENT)
    if QUANTITY in unit_cues(text):
        found.add(NUMBER)
    return frozenset(found)


@lru_cache(maxsize=65536)
def unit_cues(text: str) -> frozenset[str]:
    """The cues a unit's text meets."""
    tokens = set(tokenize(text))
    has_number = bool(_AMOUNT_SIGNS.intersection(text)) or bool(tokens & _NUMBER_WORDS)
    lowered = text.lower()
    met = set()
    if has_number:
        met.add(QUANTITY)
    if (
        tokens & _TIME_WORDS
        or (has_number and tokens & _DURATION_WORDS)
        or _YEAR_OR_CLOCK.search(text)
    ):
        met.add(TIME)
    if tokens & _POLAR_WORDS:
        met.add(POLAR)
    if tokens & _REASON_WORDS or any(phrase in lowered for phrase in _REASON_PHRASES):
        met.add(REASON)
    return frozenset(met)


# --- what a question asks about ------------------------------------------------------------


_WHAT_IS = re.compile(
    r"^\s*what(?:'s|\s+is|\s+are)\s+(?:an?\s+|the\s+)?(?P<term>[^?]+?)\s*\??\s*$", re.I
)
DEFINED_TERM_WORDS = 3  # "What is X?" asks for a definition when X is this short…
# …and does not end with a preposition: "What is Python good for?" asks what it is used for
_TRAILING_PREPOSITION = frozenset(
    ["for", "to", "of", "in", "on", "with", "about", "from", "like", "at", "by"]
)


def defined_term(question: str) -> str | None:
    """The X of a "What is X?" question (X of at most three words, not ending with a
    preposition), which only a sentence that says what X is answers; None for any other
    question."""
    found = _WHAT_IS.match(question)
    if found is None or len(found["term"].split()) > DEFINED_TERM_WORDS:
        return None
    if found["term"].split()[-1].lower() in _TRAILING_PREPOSITION:
        return None
    return found["term"]


def defines(text: str, term: str) -> bool:
    """A sentence of the text says what the term is: `X is`, `X are`, `X means`, `X refers`,
    `an X is` (the term's last word allowed a plural s)."""
    words = [re.escape(word) for word in term.split()]
    words[-1] += "s?"
    pattern = r"\b" + r"\s+".join(words) + r"\s+(?:is|are|was|means|refers|stands)\b"
    return re.search(pattern, text, re.IGNORECASE) is not None


_NUMBER = re.compile(r"^\d+(?:[.,]\d+)*$")
_PLAIN_COMPOUND = re.compile(r"^[a-z]+(?:-[a-z]+)+$")


def names(question: str) -> list[str]:
    """The names a question asks about: words with a digit, an inner `_` `.` or `-`, or a
    capital past their first letter (`KW-620`, `os.path`, `__init__`, `PyPI`), and capitalised
    words that do not start the question or a sentence (`Python`, `Tkinter`), lower-cased. A
    number (`3`, `0.1`) is a value the question gives, and a compound of plain lower-case words
    (`one-line`, `key-value`) is wording: neither is a name."""
    found: list[str] = []
    start_of_sentence = True
    for token in re.findall(r"[\w][\w.\-']*[\w]|\w|[.!?]", question):
        if token in ".!?":
            start_of_sentence = True
            continue
        if _NUMBER.match(token) or _PLAIN_COMPOUND.match(token):
            start_of_sentence = False
            continue
        shaped = any(ch.isdigit() for ch in token) or any(ch in "_.-" for ch in token)
        inner_capital = any(ch.isupper() for ch in token[1:])
        capitalised = token[0].isupper() and not start_of_sentence
        start_of_sentence = False
        if (shaped or inner_capital or capitalised) and token.lower() not in STOP_WORDS:
            found.append(token.lower())
    return list(dict.fromkeys(found))
