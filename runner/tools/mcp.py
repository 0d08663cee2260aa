"""The `mcp` kind: a tool of an MCP server (runner.mcp_client), called with arguments taken from
the task.

The server's own input schema says what the tool takes: its properties are extracted from the
task's text (purpose `extract`, as a prompt tool's `parameters`), but for the `arguments` the
pipeline fixes. When one the schema requires is missing, the tool asks its `clarify` question
(C24), or fails, saying which. The tool's text content becomes the context, with the server and
the tool as its source (C33), and its `structuredContent` is kept as the result's data, for
context consumers. A server that cannot start, does not answer in time, dies, or answers with
`isError` makes a failed tool: the round goes on and says so in its warnings.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from runner.config.model import McpOptions, ToolConfig
from runner.engine.results import ToolResult
from runner.llm.types import Purpose
from runner.mcp_client import McpError, ServerTool, connections, describe
from runner.sources import MCP_DOCUMENT_PREFIX, Source
from runner.tools.base import (
    BuiltinTool,
    Call,
    ToolBuildError,
    ToolRunError,
    clarifying_question,
    finish,
    instantiate,
    is_missing,
    may_ask,
    place,
    plain,
    template_source,
    with_answer,
)

if TYPE_CHECKING:
    from runner.tools.services import ToolServices

MAX_ERROR_CHARS = 500  # of a tool's error text, in the round's warning


class McpTool(BuiltinTool):
    """A tool of an MCP server."""

    def __init__(self, config: ToolConfig, services: ToolServices) -> None:
        super().__init__(config, services)
        assert isinstance(config.options, McpOptions)
        self.options = config.options
        server = services.pipeline.mcp_servers.get(self.options.server)
        if server is None:  # validation refuses it (R130); a model built by hand may not
            raise ToolBuildError(
                f"{place(config)}: its server {self.options.server!r} is not declared under "
                "`mcp_servers`"
            )
        self.server = server
        self.fixed = plain(self.options.arguments)
        clarify = self.options.clarify
        self.clarify_source = (
            template_source(config, clarify.question, "clarify question") if clarify else None
        )

    @property
    def source(self) -> Source:
        """What the context came from (C33): the server, and its tool as the heading."""
        return Source(
            document=f"{MCP_DOCUMENT_PREFIX}{self.server.name}", heading=self.options.tool
        )

    async def run(self, call: Call) -> ToolResult:
        listed = await self.server_tool()
        params = await self._parameters(call, listed)
        missing = [name for name in self.required(listed) if is_missing(params.get(name))]
        if missing and self.clarify_source is not None and may_ask(call, self.services):
            return clarifying_question(self.config, self.clarify_source, call, params, missing)
        if missing:
            fix = (
                "add `clarify:` to ask the user for it"
                if self.clarify_source is None
                else "the user was asked as often as the pipeline allows"
            )
            raise ToolRunError(
                f"{place(self.config)}: the task gives no {', '.join(missing)}, which the tool "
                f"{listed.name!r} of {describe(self.server)} needs; {fix}"
            )
        arguments = {**params, **self.fixed}
        try:
            reply = await connections().call(self.server, listed.name, arguments)
        except McpError as error:
            raise ToolRunError(f"{place(self.config)}: {error}") from None
        if reply.is_error:
            raise ToolRunError(
                f"{place(self.config)}: the tool {listed.name!r} of {describe(self.server)} "
                f"answered with an error: {reply.text[:MAX_ERROR_CHARS] or '(no text)'}"
            )
        data: dict[str, Any] = {
            "server": self.server.name,
            "tool": listed.name,
            "arguments": arguments,
        }
        if reply.data is not None:
            data["structured_content"] = reply.data
        return replace(finish(self.config, call.env, reply.text, [self.source]), data=data)

    async def server_tool(self) -> ServerTool:
        """The tool as its server lists it (listed once per start of the server)."""
        try:
            tools = await connections().tools(self.server)
        except McpError as error:
            raise ToolRunError(f"{place(self.config)}: {error}") from None
        listed = tools.get(self.options.tool)
        if listed is None:
            known = ", ".join(sorted(tools)) or "none"
            raise ToolRunError(
                f"{place(self.config)}: {describe(self.server)} has no tool "
                f"{self.options.tool!r} (its tools: {known}); fix `tool:`"
            )
        return listed

    def required(self, listed: ServerTool) -> tuple[str, ...]:
        """C24: `clarify.required`, else what the server's schema requires and the pipeline
        does not fix."""
        clarify = self.options.clarify
        if clarify is not None and clarify.required:
            return clarify.required
        required = listed.input_schema.get("required") or ()
        return tuple(str(name) for name in required if name not in self.fixed)

    def extraction_schema(self, listed: ServerTool) -> dict[str, Any]:
        """The server's input schema without the arguments the pipeline fixes."""
        schema = dict(listed.input_schema)
        properties = schema.get("properties")
        schema["properties"] = {
            name: spec
            for name, spec in (properties.items() if isinstance(properties, dict) else ())
            if name not in self.fixed
        }
        if isinstance(schema.get("required"), list):
            schema["required"] = [name for name in schema["required"] if name not in self.fixed]
        return schema

    async def _parameters(self, call: Call, listed: ServerTool) -> dict[str, Any]:
        schema = self.extraction_schema(listed)
        if not schema["properties"]:
            return {}
        return await call.env.prompts.extract(
            Purpose.EXTRACT,
            with_answer(call.directive, call.clarification),
            schema,
            tool=self.name,
            instruction=self.config.description or listed.description or self.config.instruction,
        )


def build(config: ToolConfig, services: ToolServices) -> McpTool:
    return instantiate(McpTool, config, services)
