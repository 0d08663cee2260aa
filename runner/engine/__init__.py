"""The engine: the recursive orchestrator of the coordination rules (C1–C33).

    task.py          the task tree and the context buffer (everything serialises to JSON)
    results.py       what tools return (ToolResult) and what the buffer holds (PromptAndContext)
    protocols.py     what a tool implements: Tool, Coordinator, ContextConsumer, ...
    marker.py        the coordinator marker and its helpers (C21–C22)
    activation.py    prompt-type filters, keyword / pattern rules
    env.py           the ToolEnv a tool gets for one call
    state.py         SessionState: a conversation's whole state (C24)
    orchestrator.py  Orchestrator.run_round(state, message) -> RoundResult
    outcome.py       RoundResult and the task tree of `runner run --json`

Nothing is imported here, so that importing one module stays cheap.
"""
