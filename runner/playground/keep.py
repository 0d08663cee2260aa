"""Keep a conversation as a `runner test` case.

A conversation's rounds (each its message, its result — the object `runner run --json` prints —
and its trace) become one test case: a turn per round (`message`, or `answer` for the reply to a
clarifying question) and, on each, the expectations an author keeps — the outcome, the tools that
ran on each task, the skipped conditional subtasks, the sources, the clarifying question and the
LLM calls by purpose. The answer's wording is not kept: it is the part that changes when a
template or a model does, and the author can add it while reviewing the case.

A pipeline on a real model (not `offline`, `scripted` or `replay`) gets the replies recorded
during the conversation as the case's script, one rule per call, so the test runs in CI with no
model; without them the case cannot be kept. The case is written to `tests/playground.yaml`
beside the pipeline (the file is created, or the case appended to it), where the next `runner
test` finds it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

# Providers whose replies a test can reproduce without a recording.
REPRODUCIBLE = frozenset({"offline", "scripted", "replay"})
DEFAULT_FILE = Path("tests") / "playground.yaml"
_HEADER = """\
# yaml-language-server: $schema={schema}
#
# Conversations kept as test cases from the playground (`runner playground`). Review them like
# any test: rename a case after the behaviour it checks, and add `answer:` checks you care about.
description: Conversations kept from the playground.
cases:
"""


# A kept case is bounded, so that the page that runs it (and every reload of it) is bounded too:
# at most as many turns as a session's page of rounds, and at most this much YAML
MAX_TURNS = 50
MAX_CASE_CHARS = 200_000


class KeepError(ValueError):
    """The conversation cannot be kept as it is; the message says why and what to do."""


@dataclass(frozen=True)
class RecordedReply:
    """One LLM reply of a round, as the playground recorded it."""

    purpose: str
    tool: str | None
    subject: str  # the task's prompt
    reply: str


@dataclass(frozen=True)
class KeptRound:
    message: str
    result: Mapping[str, Any]
    trace: Sequence[Mapping[str, Any]] = ()
    replies: Sequence[RecordedReply] | None = None  # None: not recorded


@dataclass(frozen=True)
class KeptCase:
    name: str
    case: dict[str, Any]
    path: Path  # the test file it is written to
    notes: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        """The case as YAML, as it is appended to the test file's `cases:`."""
        return case_yaml(self.case)


def keep(
    rounds: Sequence[KeptRound],
    *,
    pipeline_path: Path,
    provider: str,
    name: str | None = None,
    test_file: Path | None = None,
    cassette: Path | None = None,
) -> KeptCase:
    """The case for these rounds of one session (in order), to be written beside the pipeline
    (`test_file`: elsewhere). A real model's replies come from `cassette` (recorded with
    `--record`) when given, else from each round's recorded replies."""
    if not rounds:
        raise KeepError("the conversation has no rounds yet: ask a question first")
    path = test_file or pipeline_path.parent / DEFAULT_FILE
    notes = [
        f"round {number} was degraded (something failed and it went on without it): the case "
        "expects that; fix the pipeline rather than keep a failure you do not want"
        for number, kept in enumerate(rounds, start=1)
        if kept.result.get("degraded")
    ]
    if cassette is not None and provider not in REPRODUCIBLE:
        case = _case(rounds, name)
        relative = Path(os.path.relpath(cassette.resolve(), path.parent.resolve())).as_posix()
        case = {"name": case["name"], "llm": {"cassette": relative}, "turns": case["turns"]}
        notes.append(f"the {provider} model's replies come from the cassette {relative}")
        return KeptCase(str(case["name"]), case, path, notes)
    real_model = provider not in REPRODUCIBLE
    case = _case(rounds, name)
    script: list[dict[str, Any]] = []
    if real_model:
        for number, kept in enumerate(rounds, start=1):
            script.extend(script_rules(recorded_replies(kept, number, provider)))
    if real_model:
        case = {"name": case["name"], "llm": {"script": script}, "turns": case["turns"]}
        notes.append(
            f"the {len(script)} replies of the {provider} model are the case's script: "
            "the test runs with no model"
        )
    return KeptCase(str(case["name"]), case, path, notes)


def _case(rounds: Sequence[KeptRound], name: str | None) -> dict[str, Any]:
    """The case's name and turns: a message, or the answer to the question the round before
    asked, each with what its round did."""
    turns = []
    for number, kept in enumerate(rounds):
        previous = rounds[number - 1] if number else None
        kind = "answer" if is_answer(kept, previous) else "message"
        turns.append({kind: kept.message, "expect": expectations(kept.result)})
    return {"name": name or default_name(rounds[0].message), "turns": turns}


def provider_of(rounds: Sequence[KeptRound]) -> str:
    """The provider that answered the rounds' LLM calls, as their traces name it: a real one
    when any call went to one, else `offline` (none made a call the test cannot repeat)."""
    named = {
        str(event.get("provider"))
        for kept in rounds
        for event in kept.trace
        if event.get("event") == "llm.call" and event.get("provider")
    }
    real = sorted(named - REPRODUCIBLE)
    return real[0] if real else "offline"


def recorded_replies(kept: KeptRound, number: int, provider: str) -> Sequence[RecordedReply]:
    """A real model's replies to round `number`, all of them, or KeepError."""
    if kept.replies is None:
        raise KeepError(
            f"round {number} was answered by the {provider} model, but its replies were not "
            "recorded: keep the conversation from the playground that ran it (it records them), "
            "or have it with `runner chat … --record FILE` and keep it with `--cassette FILE`"
        )
    if any(e.get("event") == "llm.call" and e.get("cached") for e in kept.trace):
        raise KeepError(
            f"round {number} took replies from the LLM response cache, which were not "
            "recorded: start the playground with the cache off (`llm.cache: false`) and have "
            "the conversation again to keep it"
        )
    return kept.replies


def is_answer(kept: KeptRound, previous: KeptRound | None) -> bool:
    """Whether a round's message answered the question the round before it asked."""
    start = next((e for e in kept.trace if e.get("event") == "round.start"), None)
    if start is not None and start.get("kind") in ("answer", "fresh"):
        return start.get("kind") == "answer"
    return previous is not None and previous.result.get("outcome") == "clarification"


def default_name(message: str) -> str:
    words = " ".join(message.split())
    return words if len(words) <= 60 else words[:59].rstrip() + "…"


def expectations(result: Mapping[str, Any]) -> dict[str, Any]:
    """What a round produced that an author keeps as its expectations."""
    expect: dict[str, Any] = {"outcome": result.get("outcome")}
    if result.get("outcome") == "clarification" and result.get("question"):
        expect["question"] = {"contains": [first_sentence(str(result["question"]))]}
    if result.get("outcome") == "error" and result.get("error"):
        expect["error"] = {"contains": [first_sentence(str(result["error"]))]}
    tasks = result.get("tasks")
    if tasks:
        ran = [  # a tool that asked the clarifying question ran too: it did the round's work
            tool["key"]
            for task in walk(tasks)
            for tool in task.get("tools") or []
            if tool.get("status") in ("done", "asked")
        ]
        skipped = [task["task_no"] for task in walk(tasks) if task.get("skipped")]
        if ran:
            expect["ran"] = ran
        if skipped:
            expect["skipped"] = skipped
    sources: list[Any] = []
    for source in result.get("sources") or []:
        if _source(source) not in sources:
            sources.append(_source(source))
    if sources:
        expect["sources"] = sources
    elif result.get("outcome") == "answer":
        expect["no_sources"] = True
    if result.get("degraded"):  # kept as it happened; `runner test` fails it unless expected
        expect["degraded"] = True
    by_purpose = (result.get("stats") or {}).get("by_purpose") or {}
    calls = {purpose: int(numbers.get("calls", 0)) for purpose, numbers in by_purpose.items()}
    calls["total"] = sum(calls.values())
    expect["llm_calls"] = calls
    return expect


def walk(task: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    yield task
    for child in task.get("children") or []:
        yield from walk(child)


def first_sentence(text: str) -> str:
    """The text's first sentence, whole: enough to recognise it, little that a reworded template
    would break, and never cut mid-sentence (an abbreviation or a parenthesis, "(e.g. Ubuntu,
    Debian, …)", does not end it: runner.text.words.sentences)."""
    from runner.text.words import sentences

    found = sentences(text.strip())
    return " ".join((found[0] if found else text).split())


def _source(source: Mapping[str, Any]) -> Any:
    """What a kept case pins of a source: its document and the heading of its section, which
    stay when pages are renumbered (a changed `max_words`); never the page number, which does
    not."""
    heading = source.get("heading")
    return {"document": source["document"], "heading": heading} if heading else source["document"]


def script_rules(replies: Sequence[RecordedReply]) -> list[dict[str, Any]]:
    """One rule per recorded reply, each answering once, in the order they were made; `task`
    pins it to the task that asked, so subtasks running side by side get their own replies."""
    rules = []
    for reply in replies:
        rule: dict[str, Any] = {"purpose": reply.purpose}
        if reply.tool:
            rule["tool"] = reply.tool
        if reply.subject:
            rule["task"] = "^" + re.escape(reply.subject) + "$"
        rule["reply"] = reply.reply
        rule["times"] = 1
        rules.append(rule)
    return rules


class _Dumper(yaml.SafeDumper):
    """Block style, but a short list or map of plain values on one line (`ran: [1:a, 1:b]`),
    and `|` for a text of several lines."""


_PLAIN = (str, int, float, bool, type(None))
_FLOW_WIDTH = 72


def _short(values: list[Any]) -> bool:
    plain = all(isinstance(v, _PLAIN) and "\n" not in str(v) for v in values)
    return plain and sum(len(str(v)) + 2 for v in values) <= _FLOW_WIDTH


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


def _represent_dict(dumper: yaml.SafeDumper, value: dict[Any, Any]) -> yaml.Node:
    node = yaml.SafeDumper.represent_dict(dumper, value)
    node.flow_style = _short([*value.keys(), *value.values()])
    return node


def _represent_list(dumper: yaml.SafeDumper, value: list[Any]) -> yaml.Node:
    node = yaml.SafeDumper.represent_list(dumper, value)
    node.flow_style = _short(value)
    return node


_Dumper.add_representer(str, _represent_str)
_Dumper.add_representer(dict, _represent_dict)
_Dumper.add_representer(list, _represent_list)


def case_yaml(case: Mapping[str, Any]) -> str:
    """The case as an item of a `cases:` list, indented by two spaces."""
    text = yaml.dump(
        [dict(case)],
        Dumper=_Dumper,
        sort_keys=False,
        allow_unicode=True,
        width=100,
    )
    return "".join(f"  {line}" if line.strip() else line for line in text.splitlines(True))


def edited(kept: KeptCase, text: str) -> KeptCase:
    """The case as the author edited it for review (YAML: the case, or a list of one case),
    checked against the test-case schema before anything is written."""
    from runner.trace import schema_problems

    if len(text) > MAX_CASE_CHARS:
        raise KeepError(f"the edited case is longer than a kept case may be ({MAX_CASE_CHARS:,})")
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise KeepError(f"the edited case is not valid YAML: {exc}") from None
    if isinstance(data, list) and len(data) == 1:
        data = data[0]
    if not isinstance(data, dict):
        raise KeepError("the edited case must be one case: a mapping with `name` and `turns`")
    problems = schema_problems("testcase", {"cases": [data]}, "the edited case")
    if problems:
        raise KeepError("\n".join(problems))
    _refuse_foreign_llm(data.get("llm"))
    _check_bounds(data)
    return KeptCase(str(data.get("name")), data, kept.path, kept.notes)


# what a kept case's `llm:` may hold: the recorded replies, nothing that names a file or a model
KEPT_LLM_KEYS = frozenset({"script", "fallback"})


def _refuse_foreign_llm(llm: Any) -> None:
    """A case edited in the browser names no file (`script_file`, `cassette`: the test would
    read it, here and in CI) and no provider: its replies are its script."""
    if llm is None:
        return
    extra = sorted(set(llm) - KEPT_LLM_KEYS) if isinstance(llm, dict) else ["llm"]
    if extra:
        raise KeepError(
            f"a kept case's `llm:` holds only `script` and `fallback`, not {', '.join(extra)}: "
            "a case kept from the playground names no file and no model; write such a case in "
            "a test file of your own"
        )


def save(
    kept: KeptCase, schema_path: str = "../../../schemas/testcase.schema.json"
) -> tuple[Path, str]:
    """Write the case: a new test file, or appended to the playground's file; a case name the
    file already has gets a number. The file and the name the case was written under."""
    _check_bounds(kept.case)
    path = kept.path
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_HEADER.format(schema=schema_path) + kept.text, encoding="utf-8")
        return path, kept.name
    text = path.read_text(encoding="utf-8")
    data = yaml.safe_load(text) or {}
    cases = data.get("cases") if isinstance(data, dict) else None
    if not isinstance(cases, list) or list(data)[-1] != "cases" or "llm" in data:
        raise KeepError(
            f"{path} is not a file the playground wrote (its `cases:` must come last and it "
            "must have no file-level `llm:`): choose another file"
        )
    names = {case.get("name") for case in cases if isinstance(case, dict)}
    case = dict(kept.case)
    base, number = case["name"], 2
    while case["name"] in names:
        case["name"], number = f"{base} ({number})", number + 1
    joined = text if text.endswith("\n") else text + "\n"
    path.write_text(joined + case_yaml(case), encoding="utf-8")
    return path, str(case["name"])


def _check_bounds(case: Mapping[str, Any]) -> None:
    turns = case.get("turns")
    count = len(turns) if isinstance(turns, list) else 0
    if count > MAX_TURNS:
        raise KeepError(
            f"the case has {count} turns, more than a kept case may ({MAX_TURNS}): keep a "
            "shorter conversation, or split it into several cases"
        )
    size = len(case_yaml(case))
    if size > MAX_CASE_CHARS:
        raise KeepError(
            f"the case is {size:,} characters of YAML, more than a kept case may "
            f"({MAX_CASE_CHARS:,}): keep a shorter conversation"
        )


def written_case(path: Path, name: str) -> dict[str, Any] | None:
    """The case of that name in a test file, as the file holds it (None: no such case)."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError):
        return None
    cases = data.get("cases") if isinstance(data, dict) else None
    found = [c for c in cases or [] if isinstance(c, dict) and c.get("name") == name]
    return found[0] if found else None
