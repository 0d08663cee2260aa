"""The `prompt` kind: a Jinja template sent to the LLM (purpose `tool`).

Optional `parameters` are extracted first (purpose `extract`); when a required one is missing and
the tool has `clarify`, it asks its templated question instead (C24), and continuing re-extracts
from the task's text plus the user's answer. A tool with `consumes_context: true` receives the
context buffer as `context` passages (C20c): those that fit the model's context window, cut by
relevance as every prompt's passages are (runner.llm.fitting). The reply becomes context,
guaranteed context or the terminal answer, as `output` / `coordinator_output` say (C23, C25).

Without a model (the offline provider, which answers a tool from its context but never from its
prompt) the tool answers with its `offline` reply, rendered with the same variables; a tool
without one says it needs a model, and its run counts as a failure: the round is degraded.

The template's variables are PROMPT_TOOL_VARIABLES (runner/purposes.py), plus the direct-call
function `lookup(tool, key)` (C26).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from runner.config.model import Output, PromptOptions, ToolConfig
from runner.engine.results import ToolResult
from runner.llm.errors import NoModelError
from runner.llm.prompts import passages_from_buffer, passages_json
from runner.llm.types import Purpose
from runner.sources import Source
from runner.tools.base import (
    BuiltinTool,
    Call,
    clarifying_question,
    finish,
    instantiate,
    is_missing,
    may_ask,
    output_for,
    plain,
    render,
    template_source,
    trace_warning,
    with_answer,
)
from runner.tools.lookup import lookup_function

if TYPE_CHECKING:
    from runner.tools.services import ToolServices


class PromptTool(BuiltinTool):
    """A templated LLM call."""

    def __init__(self, config: ToolConfig, services: ToolServices) -> None:
        super().__init__(config, services)
        assert isinstance(config.options, PromptOptions)
        self.options = config.options
        self.template = template_source(config, self.options.template, "prompt")
        clarify = self.options.clarify
        self.clarify_source = (
            template_source(config, clarify.question, "clarify question") if clarify else None
        )
        self.required = required_parameters(self.options)
        offline = self.options.offline
        self.offline_source = (
            template_source(config, offline, "offline reply") if offline is not None else None
        )
        parameters = self.options.parameters
        # Prompts.extract lets the LLM leave any parameter out; the tool itself notices a
        # missing required one and asks (C24).
        self.extract_schema = plain(parameters.schema) if parameters else None

    async def run(self, call: Call) -> ToolResult:
        params = await self._parameters(call)
        missing = [name for name in self.required if is_missing(params.get(name))]
        if missing and self.clarify_source is not None and may_ask(call, self.services):
            return clarifying_question(self.config, self.clarify_source, call, params, missing)
        looked_up: list[Source] = []  # the rows its template's lookup() calls returned (C33)
        functions = self._functions(call, looked_up)

        def prompt_of(variables: Mapping[str, Any]) -> str:
            # rendered once per choice of context while the prompt is fitted to the model's
            # window: the rows looked up are those of the last rendering, the prompt sent
            looked_up.clear()
            return render(self.config, "prompt", self.template, {**variables, **functions})

        variables = self._variables(call, params)
        passages = passages_from_buffer(call.prior)
        try:
            reply = await call.env.prompts.tool(
                prompt_of,
                variables,
                passages,
                tool=self.name,
                subject=call.env.task.task_prompt,
                final=output_for(self.config, call.env) is Output.ANSWER,
            )
        except NoModelError:
            return self._without_model(call, {**variables, "context": passages_json(passages)})
        # what the reply drew on (C33): the buffer results its prompt was given, and the rows
        sources = [source for passage in reply.used for source in passage.sources]
        return finish(self.config, call.env, reply.text, [*sources, *looked_up])

    def _without_model(self, call: Call, variables: Mapping[str, Any]) -> ToolResult:
        """No model answers (the offline provider, with nothing but the prompt to answer from):
        the author's `offline` reply, rendered with the prompt's variables, its sources the rows
        it looked up; without one, a result that says the tool needs a model, and the round is
        degraded (never the prompt passed off as an answer). A reply that renders empty (its
        author wrote none for this case) counts as none."""
        looked_up: list[Source] = []
        text = ""
        if self.offline_source is not None:
            functions = self._functions(call, looked_up)
            variables = {**variables, **functions}
            text = render(self.config, "offline", self.offline_source, variables).strip()
        if not text:
            result = finish(self.config, call.env, needs_model(self.name))
            return replace(result, failure=NO_OFFLINE_REPLY)
        return finish(self.config, call.env, text, looked_up)

    async def _parameters(self, call: Call) -> dict[str, Any]:
        parameters = self.options.parameters
        if parameters is None or self.extract_schema is None:
            return {}
        params = await call.env.prompts.extract(
            Purpose.EXTRACT,
            with_answer(call.directive, call.clarification),
            self.extract_schema,
            tool=self.name,
            instruction=self.config.description or self.config.instruction,
            template=parameters.template,
            on_dropped=trace_warning(call.env),
        )
        # every declared parameter is present (None when not found), so templates may test it
        declared = dict.fromkeys(self.extract_schema.get("properties", {}))
        return {**declared, **(params or {})}

    def _variables(self, call: Call, params: Mapping[str, Any]) -> dict[str, Any]:
        """PROMPT_TOOL_VARIABLES but `context`: plain data, also handed to the LLM layer as the
        call's facts; the LLM layer adds the buffer's passages that fit as `context`."""
        clarification = call.clarification
        return {
            "text": call.text,
            "task": call.env.task.task_prompt,
            "original": call.original,
            "coordinator_requested": call.env.coordinator_requested,
            "params": dict(params),
            "clarification": (
                {"question": clarification.question, "answer": clarification.answer}
                if clarification is not None
                else None
            ),
            "tool": self.name,
            "domain": self.services.pipeline.domain,
        }

    def _functions(self, call: Call, looked_up: list[Source]) -> dict[str, Any]:
        return {"lookup": lookup_function(call.env, looked_up)}


NO_OFFLINE_REPLY = (
    "needs a language model: runner runs without one (the offline provider) and the tool has "
    "no `offline` reply for this case, so its result only says so; give it `offline:` (what to "
    "answer without a model) or run the pipeline with a model"
)


def needs_model(tool: str) -> str:
    """What a prompt tool without a model and without an `offline` reply answers."""
    return (
        f"This needs a language model, and none is configured: the {tool} tool cannot write "
        "its reply without one."
    )


def required_parameters(options: PromptOptions) -> tuple[str, ...]:
    """C24: `clarify.required`, or else the parameters schema's own `required` list."""
    if options.clarify is not None and options.clarify.required:
        return options.clarify.required
    if options.parameters is None:
        return ()
    return tuple(str(name) for name in options.parameters.schema.get("required", ()))


def build(config: ToolConfig, services: ToolServices) -> PromptTool:
    return instantiate(PromptTool, config, services)
