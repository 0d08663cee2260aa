"""Cassettes: the YAML file `--record` writes and the `replay` provider answers from.

    version: 1
    calls:
      - purpose: suitability
        tool: null
        prompt_hash: 3f1c…   # sha256 of the prompt
        prompt: |
          …
        reply: |
          {"manual_rag": true}

Replay answers by prompt hash. When the same prompt was recorded several times, its replies are
served in recorded order (the last one repeats). A miss shows a unified diff against the nearest
recorded prompt of the same purpose, so a changed template reads as a change in CI.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from runner.config.model import ModelSettings
from runner.llm.errors import CassetteError, CassetteMissError
from runner.llm.providers.base import ProviderReply
from runner.llm.types import LLMRequest

VERSION = 1


def prompt_hash(prompt: str) -> str:
    return hashlib.sha256(prompt.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Entry:
    """One recorded reply of a cassette, with the call it answered."""

    purpose: str
    tool: str | None
    prompt: str
    reply: str

    def to_json(self) -> dict[str, Any]:
        return {
            "purpose": self.purpose,
            "tool": self.tool,
            "prompt_hash": prompt_hash(self.prompt),
            "prompt": self.prompt,
            "reply": self.reply,
        }


class _LiteralDumper(yaml.SafeDumper):
    """Multi-line strings as `|` blocks, so a cassette diffs and reads like the prompts."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_LiteralDumper.add_representer(str, _represent_str)


class Recorder:
    """Appends every answered request to a cassette, rewriting the file atomically each time
    so that a run that dies half-way still leaves a usable cassette."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.entries: list[Entry] = []

    def add(self, entry: Entry) -> None:
        self.entries.append(entry)
        self._write()

    def _write(self) -> None:
        document = {"version": VERSION, "calls": [entry.to_json() for entry in self.entries]}
        text = yaml.dump(document, Dumper=_LiteralDumper, sort_keys=False, allow_unicode=True)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=self.path.parent, suffix=".tmp")
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.replace(temporary, self.path)


def load(path: Path) -> list[Entry]:
    if not path.is_file():
        raise CassetteError(
            f"{path}: cassette not found; record one with "
            f"`runner run PIPELINE MESSAGE --record {path}` against a real model"
        )
    try:
        document = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as error:
        raise CassetteError(f"{path}: not valid YAML: {error}") from None
    calls = document.get("calls") if isinstance(document, dict) else None
    if not isinstance(calls, list):
        raise CassetteError(f"{path}: a cassette is a mapping with `version: 1` and `calls: [...]`")
    return [_entry(path, index, call) for index, call in enumerate(calls)]


def _entry(path: Path, index: int, call: Any) -> Entry:
    if not isinstance(call, dict) or not all(k in call for k in ("purpose", "prompt", "reply")):
        raise CassetteError(
            f"{path}: calls[{index}] needs `purpose`, `prompt` and `reply` (re-record the cassette)"
        )
    return Entry(call["purpose"], call.get("tool"), str(call["prompt"]), str(call["reply"]))


class ReplayProvider:
    name = "replay"
    cacheable = False

    def __init__(self, path: Path) -> None:
        self.path = path
        self.entries = load(path)
        self._by_hash: dict[str, list[str]] = defaultdict(list)
        for entry in self.entries:
            self._by_hash[prompt_hash(entry.prompt)].append(entry.reply)
        self._served: dict[str, int] = defaultdict(int)

    def prepare(self, settings: ModelSettings) -> None:
        """Nothing to get ready."""

    async def generate(self, request: LLMRequest, settings: ModelSettings) -> ProviderReply:
        key = prompt_hash(request.prompt)
        replies = self._by_hash.get(key)
        if not replies:
            raise CassetteMissError(self._miss_message(request))
        index = min(self._served[key], len(replies) - 1)
        self._served[key] += 1
        return ProviderReply(replies[index])

    def _miss_message(self, request: LLMRequest) -> str:
        tool = f", tool {request.tool}" if request.tool else ""
        head = (
            f"{self.path}: no recorded reply for this {request.purpose.value} prompt{tool} "
            f"(sha256 {prompt_hash(request.prompt)[:12]}…)."
        )
        nearest = self._nearest(request)
        fix = f"If the change is intended, re-record: runner run … --record {self.path}"
        if nearest is None:
            return f"{head}\nThe cassette has no {request.purpose.value} prompt at all. {fix}"
        diff = difflib.unified_diff(
            nearest.prompt.splitlines(),
            request.prompt.splitlines(),
            fromfile="recorded prompt",
            tofile="prompt now",
            lineterm="",
        )
        return (
            f"{head}\nNearest recorded prompt, and how it differs:\n"
            + "\n".join(diff)
            + (f"\n{fix}")
        )

    def _nearest(self, request: LLMRequest) -> Entry | None:
        same_purpose = [e for e in self.entries if e.purpose == request.purpose.value]
        if not same_purpose:
            return None
        return max(
            same_purpose,
            key=lambda e: difflib.SequenceMatcher(None, e.prompt, request.prompt).ratio(),
        )
