"""Running test cases: each case on a fresh session in a temporary store, with its own LLM.

A pipeline's tools (and its corpora's indexes) are built once per `runner test` run and shared
by its cases: tools keep nothing of a call (C20c), and the LLM client is not theirs but the
orchestrator's, so every case gets a new client — a scripted rule's `times` counts per case.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from runner.config import PipelineError, internal_error
from runner.config.model import LLMConfig, Pipeline
from runner.documents.diagnostics import Diagnostic
from runner.testing.expect import check
from runner.testing.loader import CaseFileError, cached_pipeline_loader, load_case_file
from runner.testing.model import Case, CaseFile, LLMSpec, Turn

if TYPE_CHECKING:
    from runner.app import Runtime
    from runner.engine.outcome import RoundResult

TEST_PROVIDERS = ("offline", "scripted", "replay")
# trace events worth showing when a case fails: what went wrong inside the round
PROBLEM_EVENTS = ("tool.error", "coordinator.error", "warning")


class CaseSetupError(Exception):
    """A case that cannot be started (its LLM settings do not work for this pipeline)."""


@dataclass
class TurnReport:
    turn: Turn
    result: dict[str, Any] | None = None  # the round's `runner run --json` object
    differences: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # tool errors and warnings of the round

    @property
    def passed(self) -> bool:
        return self.result is not None and not self.differences


@dataclass
class CaseReport:
    case: Case
    turns: list[TurnReport] = field(default_factory=list)
    error: str | None = None  # the case could not run to its end
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return self.error is None and all(turn.passed for turn in self.turns)

    @property
    def failed_turn(self) -> TurnReport | None:
        return next((turn for turn in self.turns if not turn.passed), None)


@dataclass
class CaseFileReport:
    path: Path
    pipeline: Path | None = None
    cases: list[CaseReport] = field(default_factory=list)
    diagnostics: tuple[Diagnostic, ...] = ()  # the file (or its pipeline) is invalid
    error: str | None = None  # the pipeline could not be opened (a tool, a corpus)

    @property
    def passed(self) -> bool:
        return not self.diagnostics and self.error is None and all(c.passed for c in self.cases)


class TestRun:
    """Runs case files; opens each pipeline once."""

    __test__ = False  # not a pytest class, whatever its name says

    def __init__(
        self,
        *,
        allow_python: bool = False,
        select: str | None = None,
        index_progress: Callable[[str, str, int, int], None] | None = None,
        llm_override: str | None = None,
    ) -> None:
        self.allow_python = allow_python
        self.select = select
        # `runner test --llm SPEC`: every case on that LLM instead of its own (a real model)
        self.llm_override = llm_override
        self.index_progress = index_progress
        self.load_pipeline = cached_pipeline_loader()
        self.runtimes: dict[Path, Runtime | Exception] = {}

    def run(self, paths: Iterable[Path]) -> list[CaseFileReport]:
        try:
            return [self.run_file(path) for path in paths]
        finally:
            self.close()

    def close(self) -> None:
        for runtime in self.runtimes.values():
            if not isinstance(runtime, Exception):
                runtime.close()
        self.runtimes.clear()

    def run_file(self, path: Path) -> CaseFileReport:
        try:
            case_file, pipeline = load_case_file(path, self.load_pipeline)
        except CaseFileError as error:
            return CaseFileReport(path, diagnostics=error.diagnostics)
        except PipelineError as error:
            return CaseFileReport(path, error.path, diagnostics=error.diagnostics)
        except Exception as error:  # a bug of runner: this file's report says so, the others run
            return CaseFileReport(path, diagnostics=(internal_error(path, error),))
        report = CaseFileReport(path, case_file.pipeline)
        try:
            base = self._runtime(pipeline)
        except Exception as error:  # a tool or a corpus that cannot be opened
            report.error = _describe(error)
            return report
        for case in self._selected(case_file):
            report.cases.append(run_case(base, case, llm_override=self.llm_override))
        return report

    def _selected(self, case_file: CaseFile) -> list[Case]:
        if self.select is None:
            return list(case_file.cases)
        wanted = self.select.casefold()
        return [case for case in case_file.cases if wanted in case.name.casefold()]

    def _runtime(self, pipeline: Pipeline) -> Runtime:
        if pipeline.path not in self.runtimes:
            from runner.app import Runtime

            try:
                # the tools only; every case brings its own LLM client
                self.runtimes[pipeline.path] = Runtime.from_pipeline(
                    pipeline,
                    llm_override="offline",
                    cache=False,
                    allow_python=self.allow_python,
                    index_progress=self.index_progress,
                )
            except Exception as error:
                self.runtimes[pipeline.path] = error
        runtime = self.runtimes[pipeline.path]
        if isinstance(runtime, Exception):
            raise runtime
        return runtime


def run_case(base: Runtime, case: Case, *, llm_override: str | None = None) -> CaseReport:
    """One case on a fresh session in a temporary store; stops at the first turn that fails.
    `llm_override` (`--llm`'s PROVIDER[:MODEL][@API_BASE]) replaces the case's own LLM."""
    report = CaseReport(case)
    started = time.perf_counter()
    try:
        runtime = case_runtime(base, case.llm, llm_override=llm_override)
    except Exception as error:
        report.error = _describe(error)
        return report
    try:
        asyncio.run(_turns(runtime, case, report))
    except Exception as error:  # the round itself failed (not just a tool in it)
        report.error = _describe(error)
    finally:
        runtime.client.close()
        report.seconds = time.perf_counter() - started
    return report


async def _turns(runtime: Runtime, case: Case, report: CaseReport) -> None:
    try:
        await _each_turn(runtime, case, report)
    finally:
        aclose = getattr(runtime.client, "aclose", None)
        if aclose is not None:  # a model provider's connections belong to this loop
            await aclose()


async def _each_turn(runtime: Runtime, case: Case, report: CaseReport) -> None:
    from runner.sessions import SessionStore

    with (
        tempfile.TemporaryDirectory(prefix="runner-test-") as folder,
        SessionStore(Path(folder) / "sessions.sqlite") as store,
    ):
        conversation = runtime.conversation(store)
        previous: str | None = None
        for turn in case.turns:
            mistake = _turn_order_mistake(turn, previous)
            if mistake is not None:
                report.turns.append(TurnReport(turn, differences=[mistake]))
                return
            result = await conversation.say(turn.text)
            turn_report = _turn_report(turn, result)
            report.turns.append(turn_report)
            if not turn_report.passed:
                return
            previous = result.outcome


def _turn_order_mistake(turn: Turn, previous: str | None) -> str | None:
    """C24: in a session, the message after a clarifying question is its answer. A case must
    say so, so that it reads as what happens."""
    if turn.is_answer and previous != "clarification":
        return (
            "this turn is an `answer`, but the turn before it asked no clarifying question "
            f"(its outcome: {previous}); write it as `message:`"
        )
    if not turn.is_answer and previous == "clarification":
        return (
            "the turn before asked a clarifying question, so this message would be taken as "
            "its answer (C24); write it as `answer:`"
        )
    return None


def _turn_report(turn: Turn, result: RoundResult) -> TurnReport:
    from runner.retrieval.seen import retrieval_events

    events = result.trace.events if result.trace is not None else []
    data = {**result.to_json(), "retrieval": retrieval_events(events)}  # as `run --json` prints
    problems = [_problem(event) for event in events if event.get("event") in PROBLEM_EVENTS]
    return TurnReport(turn, data, check(turn.expect, data), problems)


def _problem(event: Mapping[str, Any]) -> str:
    where = f" on task {event['task']}" if event.get("task") else ""
    if event["event"] == "warning":
        return f"warning{where}: {event.get('message', '')}"
    who = event.get("tool") or event.get("coordinator") or "?"
    return f"{event['event']}{where}: {who}: {event.get('error', '')}"


# --- the LLM of a case ------------------------------------------------------------------------


def case_runtime(base: Runtime, spec: LLMSpec, *, llm_override: str | None = None) -> Runtime:
    """The base runtime's pipeline and tools with the case's own LLM client (or, with
    `llm_override`, a client of that LLM on the pipeline's own settings)."""
    from runner.app import Runtime
    from runner.llm import build_client
    from runner.llm.prompts import Prompts

    if llm_override is not None:
        client = build_client(
            base.pipeline.llm, pipeline=base.pipeline, override=llm_override, cache=False
        )
        pipeline = replace(base.pipeline, llm=client.config)
        return Runtime(pipeline, client, Prompts(client, pipeline), base.tools)
    settings = case_llm(base.pipeline, spec)
    pipeline = replace(base.pipeline, llm=settings)
    # naming the provider as an override keeps $RUNNER_LLM from replacing the case's LLM
    client = build_client(settings, pipeline=pipeline, override=settings.provider, cache=False)
    return Runtime(pipeline, client, Prompts(client, pipeline), base.tools)


def case_llm(pipeline: Pipeline, spec: LLMSpec) -> LLMConfig:
    """A case's LLM settings: its rules (scripted), its cassette (replay) or offline; without
    any, the pipeline's own `llm` when that is one of those three."""
    own = pipeline.llm
    provider = spec.provider or spec.implied_provider
    if provider is None:
        if own.provider not in TEST_PROVIDERS:
            raise CaseSetupError(
                f"the pipeline's LLM is {own.provider!r}, which tests never call; give the case "
                "(or its file) an `llm:` with `script:` rules, a `cassette:` or "
                "`provider: offline`"
            )
        return own
    if provider == "scripted":
        if not spec.script and own.provider == "scripted":
            return replace(own, fallback=spec.fallback or own.fallback)
        # a test's rules replace the pipeline's own
        return replace(
            own, provider="scripted", script=spec.script, script_file=None, fallback=spec.fallback
        )
    if provider == "replay":
        cassette = spec.cassette or (own.cassette if own.provider == "replay" else None)
        if cassette is None:
            raise CaseSetupError(
                "provider replay needs a `cassette:` (recorded with `runner run … --record FILE`)"
            )
        return replace(own, provider="replay", cassette=cassette)
    return replace(own, provider=provider)


def _describe(error: BaseException) -> str:
    from runner.render import describe_error

    if isinstance(error, CaseSetupError):
        return str(error)
    return describe_error(error)
