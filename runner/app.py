"""Composing a run: pipeline file → LLM client → prompts → tools → orchestrator, and sessions.

At runner's top because it is the application layer itself: every face (the CLI, the service,
the playground) runs rounds through it.

`Runtime.open(...)` is what `runner run`, `runner chat` and `runner test` start from; a
`Conversation` runs rounds on one stored session, saving after every step (C24):

    runtime = Runtime.open("pipelines/support.yaml", llm_override="offline")
    with open_store(None, runtime.pipeline) as store:   # or a postgresql:// URL
        conversation = runtime.conversation(store, session_id=None)
        result = asyncio.run(conversation.say("Is the KW-620 quiet?", request_id="r-1"))

A round sent with a request id that is already committed is not run again: `replay` is the one
rule, which `runner run` and `runner chat` meet through `replay_or_run` and the service in the
store call that takes the session's lock.

Heavy modules (llama-index through the retrieval layer) are imported only when the pipeline has
corpora, and only when a tool first opens one.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict, TypeVar

from runner import observability
from runner.config.model import Pipeline
from runner.sessions import (
    BackgroundWriter,
    CommittedRound,
    OpenSession,
    RoundRecord,
    SessionError,
    SessionWriter,
    Store,
)

if TYPE_CHECKING:
    from typing_extensions import Unpack  # typing.Unpack from Python 3.11

    from runner.engine.orchestrator import Orchestrator
    from runner.engine.outcome import RoundResult
    from runner.engine.protocols import Tool
    from runner.engine.state import SessionState
    from runner.llm.client import ProviderClient
    from runner.llm.exchanges import Exchange
    from runner.llm.prompts import Prompts
    from runner.trace import Trace

log = logging.getLogger(__name__)


R = TypeVar("R")


class RuntimeOptions(TypedDict, total=False):
    """The keyword arguments of `Runtime.open`, handed on to `Runtime.from_pipeline`."""

    llm_override: str | None
    llm_script: str | Path | None
    replay: str | Path | None
    record: str | Path | None
    cache: bool | None
    allow_python: bool
    build_indexes: bool
    index_progress: Callable[[str, str, int, int], None] | None
    client: ProviderClient | None


@dataclass
class Runtime:
    """A loaded pipeline with its LLM client, prompts and tools, ready to run rounds."""

    pipeline: Pipeline
    client: ProviderClient
    prompts: Prompts
    tools: dict[str, Tool]
    corpus: Callable[[str], Any] | None = None  # opens (and keeps) a corpus's index
    _orchestrator: Orchestrator | None = field(default=None, init=False, repr=False)

    @classmethod
    def open(
        cls,
        pipeline_path: str | Path,
        **options: Unpack[RuntimeOptions],
    ) -> Runtime:
        """Load and validate the pipeline file, then compose everything a round needs
        (`options`: those of `from_pipeline`).

        Raises PipelineError (an invalid file), LLMConfigError (bad provider settings) or
        ToolBuildError (a tool that cannot be built, e.g. a `python` tool not allowed)."""
        from runner.config import load_pipeline

        return cls.from_pipeline(load_pipeline(Path(pipeline_path)), **options)

    @classmethod
    def from_pipeline(
        cls,
        pipeline: Pipeline,
        *,
        llm_override: str | None = None,
        llm_script: str | Path | None = None,
        replay: str | Path | None = None,
        record: str | Path | None = None,
        cache: bool | None = None,
        allow_python: bool = False,
        build_indexes: bool = True,
        index_progress: Callable[[str, str, int, int], None] | None = None,
        client: ProviderClient | None = None,
    ) -> Runtime:
        """`client`: an LLM client to use instead of the one the pipeline's `llm:` names (a
        benchmark's simulated model); the runtime then owns it and closes it."""
        from runner.llm import build_client
        from runner.llm.prompts import Prompts
        from runner.tools import ToolServices, build_tools

        client = client or build_client(
            pipeline.llm,
            pipeline=pipeline,
            override=llm_override,
            script=Path(llm_script) if llm_script is not None else None,
            cassette=Path(replay) if replay is not None else None,
            record=Path(record) if record is not None else None,
            cache=cache,
        )
        corpus = corpus_hook(pipeline, build_indexes, index_progress)
        services = ToolServices(
            pipeline,
            allow_python=allow_python,
            corpus=corpus,
            state_dir=pipeline.state_folder,
        )
        try:
            tools = build_tools(pipeline, services)
        except BaseException:
            client.close()
            raise
        return cls(pipeline, client, Prompts(client, pipeline), tools, corpus)

    def prepare(self) -> None:
        """Do now what a first round would wait for (a service does this before it reports
        ready, `runner eval` before its first question): open every corpus's index and, where
        it has page vectors, load its embedding model and run one search through it; build the
        orchestrator; import what rounds import on first use. A one-question `runner run` pays
        for none of it that its round does not need. Raises what opening a corpus raises; a
        search that fails here is left for a round to report, with its fix."""
        if self.corpus is not None:
            for name in self.pipeline.corpora:
                _warm_up(name, self.corpus(name))
        self.orchestrator()
        _import_first_round_modules()

    def orchestrator(self) -> Orchestrator:
        """The pipeline's orchestrator, built on first use and shared by every round of the
        runtime (it holds no per-round state: each round gets its trace and checkpoint)."""
        if self._orchestrator is None:
            from runner.engine.orchestrator import Orchestrator

            self._orchestrator = Orchestrator(
                self.pipeline, self.tools, self.prompts, llm=self.client
            )
        return self._orchestrator

    def conversation(self, store: Store, session_id: str | None = None) -> Conversation:
        """Rounds on one session: the stored one with that id, or a new one."""
        return Conversation(self, store, store.open(session_id, self.pipeline))

    def close(self) -> None:
        self.client.close()

    def __enter__(self) -> Runtime:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


def _warm_up(name: str, index: Any) -> None:
    """A corpus's first search made now (CorpusIndex.warm_up). A model that cannot run here,
    or an index that cannot be read, is warned of and left for a round to report with its fix;
    anything else stops the start, with its traceback."""
    from runner.retrieval.words_alone import CANNOT_EMBED

    try:
        index.warm_up()
    except CANNOT_EMBED as error:
        log.warning("corpus %r: its first search, made to warm it up, failed: %s", name, error)


def _import_first_round_modules() -> None:
    """The modules a round imports on first use (so that a `runner run` that does not need
    them never loads them): structured replies' validation, the trace, the extraction and
    grounding checks, the authors' patterns' engine, a failure's redaction. Imported all at
    once, a first round through a service took 0.1 s more than the next."""
    import jsonschema  # noqa: F401
    import regex  # noqa: F401

    import runner.engine.failure
    import runner.llm.grounding
    import runner.llm.known_values
    import runner.llm.providers.offline_extract
    import runner.trace.why  # noqa: F401


def corpus_hook(
    pipeline: Pipeline,
    build_indexes: bool,
    progress: Callable[[str, str, int, int], None] | None = None,
) -> Callable[[str], Any] | None:
    """`services.corpus` for the retrieval kinds: None for a pipeline without corpora, so that
    such a pipeline never imports the retrieval layer."""
    if not pipeline.corpora:
        return None
    from runner.retrieval import corpus_loader

    opened: dict[str, Callable[[str], Any]] = {}

    def corpus(name: str) -> Any:
        if name not in opened:
            report = None
            if progress is not None:

                def report(stage: str, done: int, total: int) -> None:
                    progress(name, stage, done, total)

            opened[name] = corpus_loader(pipeline, build=build_indexes, progress=report)
        return opened[name](name)

    return corpus


@dataclass(frozen=True)
class RoundWatch:
    """Who watches a round while it runs: `on_event` is told each trace event as it is
    recorded (`runner.trace.Trace.listener`: the round's progress), `on_delta` each piece of
    the final answer as the model writes it (`runner.llm.streaming`)."""

    on_event: Callable[[str, str | None, Mapping[str, Any]], None] | None = None
    on_delta: Callable[[str], None] | None = None


@dataclass
class Conversation:
    """One session's rounds. Saves after every tool, every clarification and every round
    (the orchestrator's checkpoints), and keeps each finished round's result and trace."""

    runtime: Runtime
    store: Store
    session: OpenSession
    results: list[RoundResult] = field(default_factory=list)
    # a service saves checkpoints on a thread while the round goes on (BackgroundWriter); the
    # command line waits for each, so that a step is never run twice after a crash
    background_saves: bool = False

    @property
    def session_id(self) -> str:
        return self.session.state.session_id

    @property
    def state(self) -> SessionState:
        return self.session.state

    @property
    def warnings(self) -> list[str]:
        """Said once, when the session was opened (e.g. the pipeline file changed)."""
        return self.session.warnings

    async def say(
        self,
        message: str,
        *,
        request_id: str | None = None,
        watch: RoundWatch | None = None,
        after_save: Callable[[], None] | None = None,
    ) -> RoundResult:
        """One round: a fresh message, the answer to the pending question, or (when the stored
        state is an interrupted round) that round finished first. `request_id` is committed
        with the round's record, so that a re-send is answered from the store
        (`replay_or_run`); `watch` is told the round's events
        and the answer's pieces as they come; `after_save` is called right after the round's
        last save, on the thread that made it, whether it succeeded or not (a service lets go
        of the session's lock there: one hop for both)."""
        from runner.trace import Trace

        began_ns = time.time_ns()
        trace = Trace()
        if watch is not None:
            trace.listener = watch.on_event
        writer: SessionWriter | BackgroundWriter
        if self.background_saves:
            writer = BackgroundWriter(self.store, self.session.version)
        else:
            writer = SessionWriter(self.store, self.session.version)
        from runner.llm.bound import round_client

        keep = observability.wants_content()  # the calls' prompts, for an observer only
        exchanges: list[Exchange | None] = []
        try:
            # the round's own call records (its stats count its calls only: a service runs
            # rounds concurrently on one client), and where the answer goes as it is written
            client = round_client(
                self.runtime.client, watch.on_delta if watch is not None else None, calls=[]
            )
            result = await self.runtime.orchestrator().run_round(
                self.state, message, trace=trace, checkpoint=writer, llm=client
            )
            if keep:  # in the order of the trace's `llm.call` events, made from them
                exchanges = [call.exchange for call in client.calls]
            record = self._record(result, message, trace, request_id)
            if isinstance(writer, BackgroundWriter):
                await writer.finish(self.state, record, then=after_save)
            else:
                writer.finish(self.state, record, then=after_save)
        finally:
            if isinstance(writer, BackgroundWriter):
                writer.close()
        self.session.version = writer.version
        self.results.append(result)
        if observability.observed():
            observability.round_finished(
                observability.FinishedRound(
                    workflow=self.runtime.pipeline.domain,
                    began_ns=began_ns,
                    events=trace.events,
                    result=record.result,
                    exchanges=exchanges,
                    provider=_provider_name(self.runtime),
                )
            )
        return result

    def _record(
        self, result: RoundResult, message: str, trace: Trace, request_id: str | None
    ) -> RoundRecord:
        return RoundRecord(
            round=result.round,
            message=self.state.history[-1]["message"] if self.state.history else message,
            outcome=result.outcome,
            result=result.to_json(),
            trace=list(trace.events),
            request_id=request_id,
        )


def _provider_name(runtime: Runtime) -> str | None:
    """The provider the round's LLM client calls (the pipeline's, or --llm's)."""
    provider = getattr(runtime.client, "provider", None)
    name = getattr(provider, "name", None)
    return str(name) if name else None


def replay(
    store: Store, request_id: str | None, message: str, session_id: str | None = None
) -> CommittedRound | None:
    """The round already committed with `request_id`, so that a re-sent round returns its
    stored result without running anything; None when there is none (run the round).

    Raises SessionError when the key was used for another message or another session: an
    idempotency key names one request, and reusing it for a different one is a caller's bug."""
    if request_id is None:
        return None
    committed = store.committed(request_id)
    if committed is None:
        return None
    if session_id is not None and committed.session_id != session_id:
        raise SessionError(
            f"request id {request_id!r} was already used in session {committed.session_id!r}, "
            f"not {session_id!r}; send a new request id for a new request"
        )
    # PostgreSQL keeps no NUL in a text column: compare as it stored the message
    if committed.record.message.replace("\x00", "\ufffd") != message.replace("\x00", "\ufffd"):
        raise SessionError(
            f"request id {request_id!r} was already used for another message (round "
            f"{committed.record.round} of session {committed.session_id!r}: "
            f"{committed.record.message!r}); send a new request id for a new request"
        )
    return committed


async def replay_or_run(
    store: Store,
    request_id: str | None,
    message: str,
    run: Callable[[], Awaitable[R]],
    *,
    session_id: str | None = None,
) -> CommittedRound | R:
    """How a face sends a round: the round already committed with `request_id` (`replay`:
    nothing is run), else what `run()` returns (it runs the round). Raises what `replay`
    raises. (The service asks `replay` itself, in the one store call that takes the
    session's lock.)"""
    found = replay(store, request_id, message, session_id)
    return found if found is not None else await run()


def stored_result(record: RoundRecord) -> RoundResult:
    """A committed round's result, rebuilt from its stored `runner run --json` object."""
    from runner.engine.outcome import RoundResult
    from runner.sources import Source

    data = record.result
    return RoundResult(
        session=str(data["session"]),
        round=int(data["round"]),
        outcome=str(data["outcome"]),
        answer=data.get("answer"),
        question=data.get("question"),
        sources=tuple(Source.from_json(source) for source in data.get("sources") or ()),
        tasks=data.get("tasks"),
        stats=dict(data.get("stats") or {}),
        error=data.get("error"),
        warnings=list(data.get("warnings") or ()),
    )
