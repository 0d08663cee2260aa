"""The engine: the recursive orchestrator of the coordination rules (C1–C33).

    task.py          the task tree and the context buffer (everything serialises to JSON)
    results.py       what tools return (ToolResult) and what the buffer holds (PromptAndContext)
    protocols.py     what a tool implements: Tool, Coordinator, ContextConsumer, ...
    marker.py        the coordinator marker and its helpers (C21–C22)
    env.py           the ToolEnv a tool gets for one call
    state.py         SessionState: a conversation's whole state (C24)
    orchestrator.py  Orchestrator.run_round(state, message) -> RoundResult, built once a pipeline
    setup.py         RoundSetup: what a round reads of the orchestrator
    outcome.py       RoundResult and the task tree of `runner run --json`

  one round: plain functions of one `RoundContext`, each step named after its rule:
    context.py       RoundContext: the round's state, channels, failures and checkpoint
    channels.py      where results, events and questions go: the round's channel or a branch's
    round.py         run_round: begin, process (one task's steps), end, checkpoints
    coordinators.py  the coordinator step (C1–C12)
    subtasks.py      the subtask walk and parallel groups (C4–C7, C16–C19)
    activation.py    forced tools, rules, suitability (C13–C15a, C20e)
    execution.py     running one tool and what its result does (C7, C20, C23–C25)
    entry_points.py  which entry point a tool is called through (C20c, C20d, C24)
    answer.py        gatekeeper, deep fallback, final answer (C23, C27–C28, C33)

Where each rule is kept (module.function; tests/engine/test_rule_map.py checks that each
exists):

    C1   coordinators.decompose             C2   coordinators.decompose
    C3   subtasks.decide_conditional        C4   coordinators.skip_reason, coordinators.drop_reason
    C5   subtasks.close_subtasks            C6   subtasks.close_subtasks
    C7   execution.take_result              C8   coordinators.coordinator_step
    C9   coordinators.coordinator_step      C10  coordinators.decompose
    C11  coordinators.run_coordinators      C12  coordinators.adopt_one
    C13  activation.forced_activation       C14  activation.forced_activation
    C15  orchestrator.Orchestrator.forced_tools
    C15a activation.activation_candidates   C16  subtasks.decide_conditional
    C17  subtasks.completed_so_far          C18  coordinators.adopt_one
    C19  subtasks.decide_conditional        C20  context.RoundContext.env
    C20a coordinators.adopt_one             C20b coordinators.decompose
    C20c entry_points.call_entry_point      C20d entry_points.call_entry_point
    C20e activation.activates_after_subtasks
    C21  marker.execution_text              C22  marker.extract_coordinator_task
    C23  execution.as_configured            C24  execution.ask_clarification
    C25  execution.take_result              C26  env.RuntimeEnv.tool
    C27  answer.gatekeeper_verdict          C28  answer.deep_fallback
    C29  runner.tools.deep_search           C31  runner.tools.deep_search
    C30  runner.config.defaults.default_activation
    C32  runner.tools.deep_search
    C33  answer.final_answer

Nothing is imported here, so that importing one module stays cheap.
"""
