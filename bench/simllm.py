"""The simulated LLM of the benchmarks: one reply function and one meter, two faces.

- `SimProvider` is a runner LLM provider (`runner.llm.providers.base.Provider`): wrap it in a
  `runner.llm.client.ProviderClient` (`SimulatedLLM.runner_client()`), called like any model.
- `SimLlamaLLM` is a llama-index `CustomLLM` (`SimulatedLLM.llama_llm()`); `acomplete` awaits
  the latency, so llama-index's async paths really overlap.

Both wait a fixed latency per call (0.1 s by default; 0 for overhead runs), and `word_s` for
each word after the first (0 by default: a reply written at once; `SimProvider` streams it word
by word), answer from the same script (the multi-part questions and how they split into parts)
with the same extractive answer function, and count calls and prompt / completion tokens the
same way (`runner.text.estimate_tokens` on the prompt and on the reply), per system and per
purpose or prompt kind.

Replies, by kind:
- runner `decompose` and llama-index's sub-question prompt: the script's parts of the question;
- runner `answer` / `tool` / `compose` and llama-index's text-QA, refine and tree-summarize
  prompts: the context sentences that best cover the question (`answer_text`);
- llama-index's selector prompts: the choice whose summary shares most words with the question;
- every other runner purpose: runner's offline heuristics (deterministic, from the facts).
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from runner.config.model import LLMConfig, ModelSettings
from runner.llm.providers.base import ProviderReply
from runner.llm.providers.extractive import OfflinePassage, select
from runner.llm.providers.offline import NOT_FOUND, respond
from runner.llm.types import LLMRequest, Purpose
from runner.text.words import estimate_tokens, stems

_WORDS = re.compile(r"\s*\S+")  # a reply's words, each with the blanks before it
ANSWER_SENTENCES = 4  # the context sentences an answer quotes (the offline provider's figure)
DEFAULT_LATENCY_S = 0.1


class UnscriptedQuestion(LookupError):
    """A question the simulated LLM has no decomposition for."""


@dataclass(frozen=True)
class Part:
    """One part of a multi-part question: which docs answer it, and its own question."""

    tool: str  # runner's retrieval tool and llama-index's QueryEngineTool share this name
    question: str


# --- the meter ---------------------------------------------------------------------------------


@dataclass
class Usage:
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def to_json(self) -> dict[str, int]:
        return {
            "calls": self.calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
        }


@dataclass(frozen=True)
class Span:
    kind: str
    start: float
    end: float


@dataclass
class Meter:
    """Calls and tokens per kind (a runner purpose, or a llama-index prompt kind), and when each
    call ran (to find the longest chain of calls that waited for one another)."""

    by_kind: dict[str, Usage] = field(default_factory=dict)
    spans: list[Span] = field(default_factory=list)

    def record(self, kind: str, tokens: tuple[int, int], start: float, end: float) -> None:
        usage = self.by_kind.setdefault(kind, Usage())
        usage.calls += 1
        usage.prompt_tokens += tokens[0]
        usage.completion_tokens += tokens[1]
        self.spans.append(Span(kind, start, end))

    def reset(self) -> None:
        self.by_kind.clear()
        self.spans.clear()

    @property
    def calls(self) -> int:
        return sum(usage.calls for usage in self.by_kind.values())

    @property
    def prompt_tokens(self) -> int:
        return sum(usage.prompt_tokens for usage in self.by_kind.values())

    @property
    def completion_tokens(self) -> int:
        return sum(usage.completion_tokens for usage in self.by_kind.values())

    def chain(self) -> int:
        """The longest chain of calls each of which started after the previous one ended: the
        critical path in calls, as the run really went (concurrent calls count once)."""
        ordered = sorted(self.spans, key=lambda span: span.start)
        depth: list[int] = []
        for index, span in enumerate(ordered):
            before = [depth[j] for j in range(index) if ordered[j].end <= span.start]
            depth.append(1 + max(before, default=0))
        return max(depth, default=0)

    def to_json(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "by_kind": {kind: usage.to_json() for kind, usage in sorted(self.by_kind.items())},
            "critical_path_calls": self.chain(),
        }


# --- the shared replies ------------------------------------------------------------------------


def answer_text(question: str, passages: Sequence[str]) -> str:
    """The context sentences that best cover the question (runner's extractive selection)."""
    chosen = select(
        question,
        [OfflinePassage(text) for text in passages],
        per_guaranteed=0,
        limit=ANSWER_SENTENCES,
    )
    return NOT_FOUND if chosen.empty else chosen.text(cite=False)


def best_choice(question: str, choices: Sequence[str]) -> int:
    """The 1-based number of the choice sharing most word stems with the question."""
    wanted = stems(question)
    shared = [len(wanted & stems(choice)) for choice in choices]
    return 1 + max(range(len(choices)), key=lambda i: (shared[i], -i))


class SimulatedLLM:
    """The script, the latency and the meter that both faces share."""

    def __init__(
        self,
        script: Mapping[str, Sequence[Part]],
        latency_s: float = DEFAULT_LATENCY_S,
        word_s: float = 0.0,
    ) -> None:
        self.script = {question.strip(): tuple(parts) for question, parts in script.items()}
        self.latency_s = latency_s
        # writing a reply: `latency_s` to its first word, then this long for each word after it
        self.word_s = word_s
        self.meter = Meter()
        self._replies: dict[tuple[str, str], tuple[str, tuple[int, int]]] = {}
        self._computing: dict[tuple[str, str], asyncio.Future[tuple[str, tuple[int, int]]]] = {}

    def parts(self, question: str) -> tuple[Part, ...]:
        try:
            return self.script[question.strip()]
        except KeyError:
            raise UnscriptedQuestion(
                f"the simulated LLM has no parts for {question.strip()!r}: it answers only the "
                "benchmark's scripted questions (add it to the script)"
            ) from None

    async def call(self, kind: str, prompt: str, make_reply: Callable[[], str]) -> str:
        """One call: it takes exactly the latency (and the time to write the reply's words
        after the first), the reply's own computing included."""
        return await self.stream_call(kind, prompt, make_reply, None)

    async def stream_call(
        self,
        kind: str,
        prompt: str,
        make_reply: Callable[[], str],
        on_delta: Callable[[str], None] | None,
    ) -> str:
        """`call`, handing each word to `on_delta` as it is written: the first after the
        latency, each next one `word_s` later."""
        start = time.perf_counter()
        reply, tokens = await self._answer_off_loop(kind, prompt, make_reply)
        words = _WORDS.findall(reply)
        remaining = self.latency_s - (time.perf_counter() - start)
        if remaining > 0:
            await asyncio.sleep(remaining)
        for index, word in enumerate(words):
            if index and self.word_s:
                await asyncio.sleep(self.word_s)
            if on_delta is not None:
                on_delta(word)
        self.meter.record(kind, tokens, start, time.perf_counter())
        return reply

    def call_blocking(self, kind: str, prompt: str, make_reply: Callable[[], str]) -> str:
        start = time.perf_counter()
        reply, tokens = self._answer(kind, prompt, make_reply)
        remaining = self.latency_s - (time.perf_counter() - start)
        if remaining > 0:
            time.sleep(remaining)
        self.meter.record(kind, tokens, start, time.perf_counter())
        return reply

    async def _answer_off_loop(
        self, kind: str, prompt: str, make_reply: Callable[[], str]
    ) -> tuple[str, tuple[int, int]]:
        """`_answer`, a reply not made before computed off the event loop, as a model server
        (or the offline provider) does: a first reply (the offline provider reading the pages,
        up to 0.2 s) must not stall the other rounds of a served worker, which a real LLM never
        does. Calls asking the same prompt meanwhile wait for that one computation."""
        key = (kind, prompt)
        if key in self._replies:
            return self._replies[key]
        computing = self._computing.get(key)
        if computing is None:
            computing = asyncio.ensure_future(
                asyncio.to_thread(self._answer, kind, prompt, make_reply)
            )
            self._computing[key] = computing
            computing.add_done_callback(lambda _done: self._computing.pop(key, None))
        return await asyncio.shield(computing)  # one caller cancelled leaves the others theirs

    def _answer(
        self, kind: str, prompt: str, make_reply: Callable[[], str]
    ) -> tuple[str, tuple[int, int]]:
        """The reply and its (prompt, completion) tokens, computed once per prompt: a run
        repeated for its median, or at zero latency, then measures the system, not the
        simulation."""
        key = (kind, prompt)
        if key not in self._replies:
            reply = make_reply()
            self._replies[key] = reply, (estimate_tokens(prompt), estimate_tokens(reply))
        return self._replies[key]

    def tokens(self, kind: str, prompt: str) -> tuple[int, int]:
        """The (prompt, completion) tokens of an answered prompt."""
        return self._replies[kind, prompt][1]

    def runner_client(self) -> Any:
        """A runner LLM client whose provider is this simulation."""
        from runner.llm.client import ProviderClient

        # concurrency: no limit below what the benchmark asks at once, like a hosted model
        return ProviderClient(SimProvider(self), LLMConfig(provider="simulated", concurrency=64))

    def llama_llm(self) -> Any:
        return make_llama_llm(self)


# --- runner's face -----------------------------------------------------------------------------


class SimProvider:
    """A runner provider answering from the script (decompose), the shared answer function
    (answer, tool, compose) and runner's offline heuristics (the other purposes)."""

    name = "simulated"
    cacheable = False

    def __init__(self, sim: SimulatedLLM) -> None:
        self.sim = sim

    def prepare(self, settings: ModelSettings) -> None:
        """Nothing to get ready."""

    async def generate(self, request: LLMRequest, settings: ModelSettings) -> ProviderReply:
        kind, prompt = request.purpose.value, request.prompt
        text = await self.sim.call(kind, prompt, lambda: self.reply(request))
        prompt_tokens, completion_tokens = self.sim.tokens(kind, prompt)
        return ProviderReply(text, prompt_tokens, completion_tokens)

    async def stream(
        self, request: LLMRequest, settings: ModelSettings, on_delta: Callable[[str], None]
    ) -> ProviderReply:
        kind, prompt = request.purpose.value, request.prompt
        text = await self.sim.stream_call(kind, prompt, lambda: self.reply(request), on_delta)
        prompt_tokens, completion_tokens = self.sim.tokens(kind, prompt)
        return ProviderReply(text, prompt_tokens, completion_tokens)

    def reply(self, request: LLMRequest) -> str:
        facts = request.facts
        if request.purpose is Purpose.DECOMPOSE and facts["text"].strip() in self.sim.script:
            parts = self.sim.parts(facts["text"])
            return json.dumps({"parts": [{"tool": p.tool, "question": p.question} for p in parts]})
        if request.purpose is Purpose.ANSWER:
            passages = [*facts["guaranteed"], *facts["context"]]
            return answer_text(facts["question"], [p["text"] for p in passages])
        if request.purpose is Purpose.TOOL and "context" in facts:
            question = str(facts.get("task") or request.subject)
            return answer_text(question, [p["text"] for p in facts["context"]])
        if request.purpose is Purpose.COMPOSE:
            return answer_text(facts["question"], [p["text"] for p in facts["answers"]])
        return respond(request)


# --- llama-index's face ------------------------------------------------------------------------

_SUB_QUESTION = re.compile(r"<User Question>\n(?P<question>.*?)\n\s*<Output>", re.DOTALL)
_SELECTOR = re.compile(
    r"Some choices are given below.*?-{5,}\n(?P<choices>.*?)\n-{5,}\n"
    r".*?question: '(?P<question>.*?)'\n",
    re.DOTALL,
)
_TEXT_QA = re.compile(
    r"(?:Context information|Context information from multiple sources) is below\.\n-{5,}\n"
    r"(?P<context>.*?)\n-{5,}\n.*?Query: (?P<question>.*?)\nAnswer: ",
    re.DOTALL,
)
_REFINE = re.compile(
    r"The original query is as follows: (?P<question>.*?)\nWe have provided an existing answer: "
    r"(?P<answer>.*?)\nWe have the opportunity.*?-{5,}\n(?P<context>.*?)\n-{5,}\n",
    re.DOTALL,
)
_CHOICE = re.compile(r"^\(?(\d+)\)?[.:)]?\s*(.*)$")
# checked in this order: a refine prompt holds no text-QA header, a selector no sub-question
_LLAMA_PROMPTS = {
    "sub_question": _SUB_QUESTION,
    "selector": _SELECTOR,
    "refine": _REFINE,
    "synthesis": _TEXT_QA,
}


def llama_kind(prompt: str) -> str:
    """Which of llama-index's default prompts this is."""
    for kind, pattern in _LLAMA_PROMPTS.items():
        if pattern.search(prompt):
            return kind
    raise ValueError(
        f"the simulated LLM does not know this llama-index prompt: {prompt[:120]!r}…; "
        "teach llama_reply() its kind"
    )


def llama_reply(sim: SimulatedLLM, kind: str, prompt: str) -> str:
    """The reply to one of llama-index's default prompts, of the given kind."""
    match = _LLAMA_PROMPTS[kind].search(prompt)
    assert match is not None, "llama_kind() chose the kind by this very pattern"
    if kind == "sub_question":
        # the prompt's own example question comes first; the real one is the last
        question = _LLAMA_PROMPTS[kind].findall(prompt)[-1]
        items = [{"sub_question": p.question, "tool_name": p.tool} for p in sim.parts(question)]
        return f"```json\n{json.dumps({'items': items}, indent=4)}\n```"
    if kind == "selector":
        choices = [_CHOICE.match(line) for line in match["choices"].splitlines() if line.strip()]
        texts = [choice[2] if choice else "" for choice in choices]
        number = best_choice(match["question"], texts)
        return json.dumps([{"choice": number, "reason": "it shares most words with the question"}])
    if kind == "refine":
        return answer_text(match["question"], [match["answer"], match["context"]])
    return answer_text(match["question"], [match["context"]])


def make_llama_llm(sim: SimulatedLLM) -> Any:
    """A llama-index CustomLLM over `sim` (llama-index is imported here, not at module load)."""
    from llama_index.core.base.llms.types import CompletionResponse, LLMMetadata
    from llama_index.core.llms import CustomLLM
    from llama_index.core.llms.callbacks import llm_completion_callback

    class SimLlamaLLM(CustomLLM):
        """llama-index's view of the simulated LLM."""

        @property
        def metadata(self) -> LLMMetadata:
            return LLMMetadata(context_window=32768, num_output=512, model_name="simulated")

        @llm_completion_callback()
        def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
            kind = llama_kind(prompt)
            text = sim.call_blocking(kind, prompt, lambda: llama_reply(sim, kind, prompt))
            return CompletionResponse(text=text)

        @llm_completion_callback()
        async def acomplete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
            kind = llama_kind(prompt)
            text = await sim.call(kind, prompt, lambda: llama_reply(sim, kind, prompt))
            return CompletionResponse(text=text)

        @llm_completion_callback()
        def stream_complete(
            self, prompt: str, formatted: bool = False, **kwargs: Any
        ) -> Iterator[Any]:
            response = self.complete(prompt, formatted=formatted)
            yield CompletionResponse(text=response.text, delta=response.text)

    return SimLlamaLLM()
