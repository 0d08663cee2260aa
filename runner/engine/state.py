"""The whole state of a conversation (C24): what a session stores between rounds.

The orchestrator works on a `SessionState` in place and hands it to its checkpoint callback after
every step that must not be lost, so a crash at any point resumes from the last stored state:
`active_message` is set while a round is in flight and cleared when it ends, and a stored state
with it set is an interrupted round that the next call finishes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from runner.engine.results import Clarification
from runner.engine.task import ContextBuffer, Task

if TYPE_CHECKING:
    from runner.config.model import Pipeline

STATE_FORMAT = 1


@dataclass
class SessionState:
    """What a session keeps between rounds: its task tree, context and pending question."""

    session_id: str
    pipeline_path: str
    pipeline_hash: str
    root: Task | None = None
    buffer: ContextBuffer = field(default_factory=ContextBuffer)
    # A question waiting for the user (answer None), or answered and not yet handed to the tool
    # that asked it (answer set; only while a round is in flight).
    pending: Clarification | None = None
    clarifications: list[Clarification] = field(default_factory=list)  # answered ones, in order
    rounds: int = 0
    active_message: str | None = None
    history: list[dict[str, Any]] = field(default_factory=list)  # one entry per finished round

    @classmethod
    def new(cls, session_id: str, pipeline: Pipeline) -> SessionState:
        return cls(session_id, str(pipeline.path), pipeline.content_hash)

    @property
    def interrupted(self) -> bool:
        """A round started and never ended (the process died): the next call resumes it."""
        return self.active_message is not None

    @property
    def waiting(self) -> bool:
        """A clarifying question waits for the user's answer (C24)."""
        return self.pending is not None and self.pending.answer is None

    def to_json(self) -> dict[str, Any]:
        return {
            "format": STATE_FORMAT,
            "session_id": self.session_id,
            "pipeline_path": self.pipeline_path,
            "pipeline_hash": self.pipeline_hash,
            "root": None if self.root is None else self.root.to_json(),
            "buffer": self.buffer.to_json(),
            "pending": None if self.pending is None else self.pending.to_json(),
            "clarifications": [c.to_json() for c in self.clarifications],
            "rounds": self.rounds,
            "active_message": self.active_message,
            "history": [dict(entry) for entry in self.history],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SessionState:
        found = data.get("format", STATE_FORMAT)
        if found != STATE_FORMAT:
            raise ValueError(
                f"session state format {found} is not {STATE_FORMAT}: this session was stored by "
                "another version of runner; start a new session"
            )
        root = data.get("root")
        pending = data.get("pending")
        return cls(
            session_id=data["session_id"],
            pipeline_path=data["pipeline_path"],
            pipeline_hash=data["pipeline_hash"],
            root=None if root is None else Task.from_json(root),
            buffer=ContextBuffer.from_json(data.get("buffer", [])),
            pending=None if pending is None else Clarification.from_json(pending),
            clarifications=[Clarification.from_json(c) for c in data.get("clarifications", [])],
            rounds=data.get("rounds", 0),
            active_message=data.get("active_message"),
            history=[dict(entry) for entry in data.get("history", [])],
        )
