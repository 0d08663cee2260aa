"""The engine: the recursive orchestrator of the coordination rules (C1–C33).

    task.py          the task tree and the context buffer (everything serialises to JSON)
    results.py       what tools return (ToolResult) and what the buffer holds (PromptAndContext)
    protocols.py     what a tool implements: Tool, Coordinator, ContextConsumer, ...
    marker.py        the coordinator marker and its helpers (C21–C22)
    env.py           the ToolEnv a tool gets for one call
    state.py         SessionState: a conversation's whole state (C24)
    orchestrator.py  Orchestrator.run_round(state, message) -> RoundResult
    outcome.py       RoundResult and the task tree of `runner run --json`

  the rooms of one round (orchestrator.py lists which rule lives where):
    round.py         begin, one task's steps, end, checkpoints
    coordinators.py  the coordinator step (C1–C12)
    subtasks.py      the subtask walk and parallel groups (C4–C7, C16–C19)
    activation.py    forced tools, rules, suitability (C13–C15a, C20e)
    execution.py     running one tool (C20c–C25)
    answer.py        gatekeeper, deep fallback, final answer (C23, C27–C28, C33)
    channels.py      where results, events, questions and LLM calls go

Nothing is imported here, so that importing one module stays cheap.
"""
