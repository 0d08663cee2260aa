"""Degenerate text replies: a model that loops, or that echoes its request instead of
answering.

Small local models do both: SmolLM2-135M wrote one sentence over and over until `max_tokens`,
and began answers with "You are asked to answer the question: …". Such a reply is not empty, so
nothing else stops it reaching the user. `diagnose` finds:

- **repetition**: a sentence (of three words or more) that comes three times or more, or a run of
  words repeated back to back four times or more (`the filter the filter the filter …`; one
  word, eight times), read in the prose: a fenced code block is quoted code, whose lines may
  rightly repeat, and loops only when the same block comes three times;
- **echo** (the final answer and compose, whose prompts are runner's instructions around the
  question and the passages): the reply repeats the request's own instructions (a sentence of
  five words or more of the prompt that is neither the question nor a passage it was given), or
  opens by restating its task ("You are asked to …", "Question: …").

and what is left of the reply once the repeats and the echoed sentences are cut. The client asks
once more (runner.llm.client), then takes the cut reply and the round is degraded.
"""

from __future__ import annotations

import functools
import operator
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from runner.llm.types import LLMRequest, Purpose
from runner.text.markup import FENCED_BLOCK

_SENTENCE = re.compile(r"[^.!?\n]+(?:[.!?]+|\n|$)")
_WORD = re.compile(r"[^\W_]+(?:[-'][^\W_]+)*")
_RESTATED_TASK = re.compile(
    r"^\W*(?:(?:you|i|we)\s+(?:are|am|were|was|'re|'m)\s+(?:being\s+)?asked\s+to\b"
    r"|(?:the\s+)?(?:question|task|request)\s*:)",
    re.IGNORECASE,
)
MIN_REPEATED_WORDS = 3  # a sentence shorter than this ("Yes.") may well come back
REPEATS = 3  # a sentence this many times is a loop
RUN_REPEATS = 4  # a run of words back to back this many times is a loop
MAX_RUN_WORDS = 12
MIN_ECHO_WORDS = 5
# Whose prompts are instructions around the given texts: the answer's and compose's. A prompt
# tool's template also writes data (a table row as a sentence) that its reply rightly repeats,
# so its replies are checked for loops only.
ECHO_PURPOSES = frozenset({Purpose.ANSWER, Purpose.COMPOSE})


@dataclass(frozen=True)
class Degenerate:
    """What is wrong with a reply, and the reply without it."""

    kind: str  # repetition | echo
    detail: str  # for the trace and the retry's correction
    cut: str  # the reply with the repeats and the echo taken out ("" when nothing is left)

    def correction(self) -> str:
        """What the retried prompt gets appended."""
        if self.kind == "repetition":
            return (
                "\n\nYour previous reply repeated itself. Reply again: say each thing once, "
                "then stop."
            )
        return (
            "\n\nYour previous reply repeated the request instead of answering it. Reply again "
            "with the answer only, in your own words."
        )


def in_reply(text: str, request: LLMRequest) -> Degenerate | None:
    """A text reply that loops or echoes its prompt (never a structured one: its schema
    decides)."""
    if request.schema is not None:
        return None
    echo = request.purpose in ECHO_PURPOSES
    return diagnose(text, request.prompt, _texts(request.facts), echo=echo)


def _texts(value: Any) -> Iterator[str]:
    """Every text in a request's facts: what the prompt was rendered with. Walked only when
    a reply sentence is one of the prompt's (see _echo), which is seldom. A stack, not
    recursion: nested generators passed each text up through every level of the facts."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, Mapping):
            pending.extend(reversed(list(item.values())))
        elif isinstance(item, list | tuple):
            pending.extend(reversed(item))


def diagnose(
    reply: str, prompt: str, given: Iterable[str] = (), *, echo: bool = True
) -> Degenerate | None:
    """Whether a text reply loops or (with `echo`) echoes its prompt. `given` are the texts the
    prompt was rendered with (the question, the passages): repeating those is quoting, not
    echoing."""
    looped = _repetition(reply)
    if looped is not None or not echo:
        return looped
    return _echo(reply, prompt, given)


def _repetition(reply: str) -> Degenerate | None:
    """A loop in the prose of a reply. Code blocks are read apart: quoted code repeats lines
    rightly (three `CREATE TABLE products (` of three examples), so a block is a loop only
    when the same block comes REPEATS times."""
    blocks = Counter(block.group(0).strip() for block in FENCED_BLOCK.finditer(reply))
    looped_block = next((b for b, count in blocks.items() if count >= REPEATS), None)
    if looped_block is not None:
        first = reply.index(looped_block) + len(looped_block)
        return Degenerate(
            "repetition",
            f"the code block {_excerpt(looped_block)!r} came {blocks[looped_block]} times",
            reply[:first].strip(),
        )
    prose = FENCED_BLOCK.sub("\n", reply) if blocks else reply
    sentences = _sentences(prose)
    seen: dict[str, int] = {}
    for sentence in sentences:
        key = _key(sentence)
        if len(key.split()) >= MIN_REPEATED_WORDS:
            seen[key] = seen.get(key, 0) + 1
    looping = [key for key, count in seen.items() if count >= REPEATS]
    if looping:
        kept = _unique(sentences)
        return Degenerate(
            "repetition",
            f"the sentence {_excerpt(looping[0])!r} came {seen[looping[0]]} times",
            _join(kept),
        )
    words = _WORD.findall(prose)
    run = _repeated_run([w.casefold() for w in words])
    if run is None:
        return None
    start, length = run
    shown = " ".join(words[start : start + length])
    end = _position_after(prose, words, start + length)
    return Degenerate(
        "repetition", f"the words {_excerpt(shown)!r} came back to back", prose[:end].strip()
    )


def _echo(reply: str, prompt: str, given: Iterable[str]) -> Degenerate | None:
    # an echoed sentence is one of the prompt's instructions: a sentence of the prompt, of
    # MIN_ECHO_WORDS words or more, that is in none of the given texts. The given texts (the
    # passages: most of the prompt) are read only for the reply's sentences that are the
    # prompt's, which a sound reply has none of.
    of_prompt = {
        key
        for sentence in _sentences(prompt)
        if len((key := _key(sentence)).split()) >= MIN_ECHO_WORDS
    }
    sentences = _sentences(reply)
    echoed = [s for s in sentences if _key(s) in of_prompt]
    if echoed:
        given_keys = " | ".join(_key(text) for text in given)
        echoed = [s for s in echoed if _key(s) not in given_keys]
    opening = sentences[:1] if sentences and _RESTATED_TASK.match(sentences[0]) else []
    if not echoed and not opening:
        return None
    dropped = {id(s) for s in [*echoed, *opening]}
    what = echoed[0] if echoed else opening[0]
    return Degenerate(
        "echo",
        f"the reply repeats the request: {_excerpt(what.strip())!r}",
        _join([s for s in sentences if id(s) not in dropped]),
    )


def _sentences(text: str) -> list[str]:
    return [m.group(0) for m in _SENTENCE.finditer(text) if m.group(0).strip()]


@functools.lru_cache(maxsize=4096)
def _key(sentence: str) -> str:
    """A sentence's words, casefolded. Kept by its text: a prompt's instructions and the
    passages it quotes come back round after round, and so do their sentences."""
    return " ".join(word.casefold() for word in _WORD.findall(sentence))


def _unique(sentences: list[str]) -> list[str]:
    seen: set[str] = set()
    kept = []
    for sentence in sentences:
        key = _key(sentence)
        if key and key in seen:
            continue
        seen.add(key)
        kept.append(sentence)
    return kept


def _join(sentences: list[str]) -> str:
    return " ".join(" ".join(s.split()) for s in sentences).strip()


def _repeated_run(words: list[str]) -> tuple[int, int] | None:
    """(start, length) of the first run of 1 to MAX_RUN_WORDS words repeated back to back
    RUN_REPEATS times or more. `repeats` copies of `length` words from `start` are the words
    from `start` on each equal to the one `length` further, (repeats - 1) × length times in a
    row: one pass a length instead of comparing slices at every start."""
    for length in range(1, MAX_RUN_WORDS + 1):
        repeats = RUN_REPEATS * 2 if length == 1 else RUN_REPEATS  # "very very" is English
        needed = (repeats - 1) * length
        streak = 0
        for position, same in enumerate(map(operator.eq, words, words[length:])):
            streak = streak + 1 if same else 0
            if streak >= needed:
                return position - needed + 1, length
    return None


def _position_after(text: str, words: list[str], count: int) -> int:
    """Where the `count`-th word of `text` ends."""
    position = 0
    for word in words[:count]:
        position = text.index(word, position) + len(word)
    return position


def _excerpt(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
