"""Property: any session state goes through the store and comes back the same (C24)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from runner.engine.results import Clarification, PromptAndContext
from runner.engine.state import SessionState
from runner.engine.task import ContextBuffer, Task, TaskStatus, ToolStatus
from runner.sessions import SessionStore
from runner.sources import Source

NAMES = st.sampled_from(["lookup", "rag", "compare", "search", "neighbors"])
TEXT = st.text(max_size=30)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=6,
)


@st.composite
def tasks(draw, task_no: str = "1", depth: int = 0) -> Task:
    task = Task(
        task_no=task_no,
        task_prompt=draw(TEXT),
        important_words=draw(st.lists(st.text(min_size=1, max_size=8), max_size=3)),
        prompt_type=draw(st.none() | st.sampled_from(["question", "smalltalk"])),
        required_tool_names=draw(st.sets(NAMES, max_size=2)),
        conditional=draw(st.booleans()),
        owner_coordinator_name=draw(st.none() | NAMES),
        applied_coordinator_names=draw(st.sets(NAMES, max_size=3)),
        prompt_context=draw(st.none() | TEXT),
        status=draw(st.sampled_from(list(TaskStatus))),
        tool_status=draw(st.dictionaries(NAMES, st.sampled_from(list(ToolStatus)), max_size=2)),
        loop_vars=draw(
            st.dictionaries(st.sampled_from(["item", "model"]), JSON_VALUES, max_size=2)
        ),
        template_name=draw(st.none() | st.sampled_from(["near", "#2"])),
        depth=depth,
    )
    if depth < 2:
        count = draw(st.integers(0, 2))
        task.sub_tasks = [draw(tasks(f"{task_no}.{i}", depth + 1)) for i in range(1, count + 1)]
    return task


@st.composite
def states(draw) -> SessionState:
    root = draw(st.none() | tasks())
    buffer = ContextBuffer()
    for key in draw(st.lists(NAMES, max_size=3, unique=True)):
        source = Source(draw(TEXT), page=draw(st.none() | st.integers(1, 9)))
        buffer.add(
            "1", key, PromptAndContext(draw(TEXT), draw(TEXT), draw(st.booleans()), (source,))
        )
    pending = draw(
        st.none() | st.builds(Clarification, st.just("1"), NAMES, TEXT, st.none() | TEXT)
    )
    return SessionState(
        session_id="s",
        pipeline_path="/p/pipeline.yaml",
        pipeline_hash="h",
        root=root,
        buffer=buffer,
        pending=pending,
        rounds=draw(st.integers(0, 5)),
        active_message=draw(st.none() | TEXT),
        history=[{"round": 1, "message": draw(TEXT), "outcome": "answer"}],
    )


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(state=states())
def test_c24_any_state_is_stored_and_loaded_back_without_loss(tmp_path_factory, state):
    path: Path = tmp_path_factory.mktemp("store") / "state.sqlite"
    with SessionStore(path) as store:
        store.save(state, 0)
        loaded, version = store.load("s")
    assert version == 1
    assert loaded.to_json() == state.to_json()
