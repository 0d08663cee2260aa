"""The scripted provider: rules that match a request and give its reply. What tests and CI use.

A rule matches when every field it sets matches: `purpose` (equal), `tool` (equal, simple or
domain-prefixed name), `task` (a regex searched in the task text) and `prompt` (a regex searched
in the rendered prompt), both case-insensitive like every pattern of a pipeline
(runner/text/patterns.py). Patterns and the request are compared in runner's normal form
(`runner.text.words.normalize`): a non-breaking space in a page matches a space in a pattern. The
first matching rule with answers left (`times`) answers. A reply is text, or any other YAML
value sent as JSON. A request no rule matches is an error that shows the request — unless
`fallback: offline` lets the offline provider answer it.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from runner.config.model import ModelSettings, ScriptRule
from runner.config.script_rules import script_rule
from runner.llm.errors import ScriptError, ScriptMissError
from runner.llm.providers.base import Provider, ProviderReply
from runner.llm.streaming import Deltas
from runner.llm.types import LLMRequest, Purpose
from runner.text.patterns import TimedPattern, compile_pattern
from runner.text.words import normalize, visible

_RULE_FIELDS = {"purpose", "tool", "task", "prompt", "reply", "times"}
_PROMPT_LINES_SHOWN = 12
_PURPOSES = frozenset(purpose.value for purpose in Purpose)
_WORDS = re.compile(r"\s*\S+")  # a streamed reply's pieces: each word with the blanks before it


@dataclass
class _CompiledRule:
    rule: ScriptRule
    origin: str  # where the rule was written, for error messages
    task: TimedPattern | None
    prompt: TimedPattern | None
    used: int = 0

    def matches(self, request: LLMRequest) -> bool:
        rule = self.rule
        if rule.times is not None and self.used >= rule.times:
            return False
        if rule.purpose is not None and rule.purpose != request.purpose.value:
            return False
        if rule.tool is not None and not _same_tool(rule.tool, request.tool):
            return False
        if self.task is not None and not self.task.search(normalize(request.subject)):
            return False
        return self.prompt is None or bool(self.prompt.search(normalize(request.prompt)))


def _same_tool(wanted: str, actual: str | None) -> bool:
    if actual is None:
        return False
    return wanted == actual or wanted.rsplit(".", 1)[-1] == actual.rsplit(".", 1)[-1]


def reply_text(reply: Any) -> str:
    return reply if isinstance(reply, str) else json.dumps(reply, ensure_ascii=False)


class ScriptedProvider:
    name = "scripted"
    cacheable = False

    def __init__(
        self,
        rules: list[tuple[ScriptRule, str]],
        fallback: Provider | None = None,
    ) -> None:
        self.rules = [_compile(rule, origin) for rule, origin in rules]
        self.fallback = fallback

    def prepare(self, settings: ModelSettings) -> None:
        """Nothing to get ready."""

    async def generate(self, request: LLMRequest, settings: ModelSettings) -> ProviderReply:
        for compiled in self.rules:
            if compiled.matches(request):
                compiled.used += 1
                return ProviderReply(reply_text(compiled.rule.reply))
        if self.fallback is not None:
            return await self.fallback.generate(request, settings)
        raise ScriptMissError(miss_message(request))

    async def stream(
        self, request: LLMRequest, settings: ModelSettings, on_delta: Deltas
    ) -> ProviderReply:
        """The reply, written a word at a time as a model would (the event loop runs between
        words, so a face watching the round shows each as it comes)."""
        reply = await self.generate(request, settings)
        for piece in _WORDS.findall(reply.text):
            on_delta(piece)
            await asyncio.sleep(0)
        return reply


def _compile(rule: ScriptRule, origin: str) -> _CompiledRule:
    return _CompiledRule(
        rule, origin, _regex(rule.task, origin, "task"), _regex(rule.prompt, origin, "prompt")
    )


def _regex(pattern: str | None, origin: str, field: str) -> TimedPattern | None:
    if pattern is None:
        return None
    try:
        return compile_pattern(normalize(pattern))
    except re.error as error:
        raise ScriptError(
            f"{origin}: `{field}` is not a valid regular expression ({error}); "
            "escape special characters such as ( ) ? + with a backslash"
        ) from None


def miss_message(request: LLMRequest) -> str:
    """The request as the rules saw it (normal form), any character that does not show written
    as its code point (`<U+00A0>`), so that a rule that "should match" shows why it does not."""
    lines = visible(normalize(request.prompt)).splitlines()
    shown = "\n".join(f"    | {line}" for line in lines[:_PROMPT_LINES_SHOWN])
    hidden = len(lines) - _PROMPT_LINES_SHOWN
    more = f"\n    | … ({hidden} more lines)" if hidden > 0 else ""
    tool_line = f"\n  tool:    {request.tool}" if request.tool else ""
    rule_tool = f", tool: {request.tool}" if request.tool else ""
    return (
        "the scripted LLM has no rule for this request:\n"
        f"  purpose: {request.purpose.value}{tool_line}\n"
        f"  task:    {visible(normalize(request.subject))!r}\n"
        f"  prompt:\n{shown}{more}\n"
        "Add a rule such as\n"
        f"  - {{purpose: {request.purpose.value}{rule_tool}, reply: ...}}\n"
        "to the script, or set `fallback: offline` to let the offline provider answer the rest."
    )


def rules_from_config(rules: tuple[ScriptRule, ...], origin: str) -> list[tuple[ScriptRule, str]]:
    return [(rule, _origin(rule, origin, index)) for index, rule in enumerate(rules)]


def _origin(rule: ScriptRule, origin: str, index: int) -> str:
    return str(rule.where) if rule.where is not None else f"{origin} rule {index + 1}"


def load_script_file(path: Path) -> tuple[list[tuple[ScriptRule, str]], str | None]:
    """Rules from a YAML file: a list of rules, or `{rules: [...], fallback: offline}`."""
    if not path.is_file():
        raise ScriptError(f"{path}: LLM script file not found (check --llm-script / script_file)")
    try:
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        raise ScriptError(f"{path}: not valid YAML: {error}") from None
    fallback = None
    if isinstance(document, dict):
        fallback = document.get("fallback")
        if fallback not in (None, "offline"):
            raise ScriptError(f"{path}: `fallback` can only be `offline` (got {fallback!r})")
        document = document.get("rules")
    if not isinstance(document, list):
        raise ScriptError(
            f"{path}: an LLM script is a YAML list of rules "
            "(- {purpose: suitability, reply: {...}}), or a mapping with `rules:` and `fallback:`"
        )
    rules = [_rule(path, index, item) for index, item in enumerate(document)]
    return rules, fallback


def _rule(path: Path, index: int, item: Any) -> tuple[ScriptRule, str]:
    origin = f"{path}: rule {index + 1}"
    if not isinstance(item, dict) or "reply" not in item:
        raise ScriptError(f"{origin}: a rule is a mapping with at least `reply:`")
    unknown = sorted(set(item) - _RULE_FIELDS)
    if unknown:
        raise ScriptError(
            f"{origin}: unknown field(s) {', '.join(unknown)}; "
            f"a rule may have {', '.join(sorted(_RULE_FIELDS))}"
        )
    times = item.get("times")
    if times is not None and (not isinstance(times, int) or times < 1):
        raise ScriptError(f"{origin}: `times` must be a positive whole number")
    for key in ("purpose", "tool", "task", "prompt"):
        if item.get(key) is not None and not isinstance(item[key], str):
            raise ScriptError(f"{origin}: `{key}` must be a string")
    purpose = item.get("purpose")
    if purpose is not None and purpose not in _PURPOSES:
        raise ScriptError(
            f"{origin}: unknown purpose {purpose!r}; use one of {', '.join(sorted(_PURPOSES))}"
        )
    return script_rule(item, where=None), origin
