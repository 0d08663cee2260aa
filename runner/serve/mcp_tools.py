"""The service's pipelines as MCP tools: one tool per domain, taking the user's `question` and,
to go on with a conversation, its `session_id`.

`runner serve --mcp` mounts them at `/mcp` (streamable HTTP, stateless: any worker answers any
request, the conversation lives in the session store), behind the service's bearer tokens;
`runner mcp serve PIPELINE` speaks the same over stdio, for desktop clients. A round runs as a
request to the native API would run it (`Service.run_round`).

The tool's text is the answer, or the clarifying question marked as one, with the session id
to answer it with; its structured content is the outcome, the session id, the answer or the
question, the sources and the warnings. A refusal — an argument the tool does not take or that
is missing or mistyped (runner.serve.mcp_arguments), a round refused or failed — is an error
result whose structured content is the service's JSON error. Only tools are served and only
tools are advertised: no prompts, no resources, no subscriptions.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from importlib.metadata import version
from typing import TYPE_CHECKING, Annotated, Any

# at the top, not in the functions: the SDK reads the tools' signatures (their annotations)
# in this module's namespace; this module is imported only when MCP is served
from mcp.server.mcpserver import Context
from mcp_types import CallToolResult, TextContent
from pydantic import Field
from starlette.requests import Request

from runner.serve.mcp_arguments import argument_problem, closed_schema
from runner.service.errors import BadRequest, ServiceError, as_service_error
from runner.service.principals import LOCAL, Client, client_of

if TYPE_CHECKING:
    from mcp.server import MCPServer
    from starlette.applications import Starlette

    from runner.service.pipelines import Service

MCP_PATH = "/mcp"
QUESTION = "The user's question or message, in their words."
SESSION = (
    "To go on with a conversation, the session_id an earlier result of this tool gave; "
    "leave it out to start a new one. A clarifying question is answered this way."
)


def pipelines_server(service: Service) -> MCPServer:
    """An MCP server whose tools are the service's pipelines, one per domain."""
    from mcp.server import MCPServer

    server = MCPServer(
        "runner",
        version=version("runner"),
        instructions=(
            "Each tool answers questions of one domain. When a result is a clarifying "
            "question, ask the user, then call the same tool with their answer as `question` "
            "and the result's `session_id`."
        ),
        subscriptions=False,  # nothing changes under a client: no subscriptions/listen
    )
    for domain, runtime in service.runtimes.items():
        server.add_tool(
            _ask(service, domain),
            name=domain,
            title=f"Ask {domain}",
            description=_description(domain, runtime.pipeline.description),
        )
        tool = server._tool_manager.get_tool(domain)
        if tool is not None:  # advertised as it is checked: no argument but its own
            tool.parameters = closed_schema(tool.parameters)
    _serve_tools_only(server)
    return server


# what the SDK serves besides tools, which runner has none of: left unserved, the server's
# capabilities advertise neither prompts nor resources (nor `subscribe`), and a client that
# asks anyway gets JSON-RPC's "method not found"
_NOT_SERVED = (
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "resources/subscribe",
    "resources/unsubscribe",
    "subscriptions/listen",
)


def _serve_tools_only(server: MCPServer) -> None:
    """Tools only, each call's arguments checked in the tool's words before the SDK's
    validation (whose pydantic message names no fix, and which takes unknown arguments)."""
    from mcp_types import CallToolRequestParams

    lowlevel = server._lowlevel_server
    for method in _NOT_SERVED:
        lowlevel._request_handlers.pop(method, None)
    sdk_call = lowlevel._request_handlers["tools/call"].handler

    async def call_tool(ctx: Any, params: CallToolRequestParams) -> Any:
        problem = argument_problem(params.arguments or {})
        if problem is None:
            return await sdk_call(ctx, params)
        argument, message = problem
        error = BadRequest(message)
        data = error.to_json()
        data["error"]["argument"] = argument
        return _error(message, data)

    lowlevel.add_request_handler("tools/call", CallToolRequestParams, call_tool)


def mount(app: Starlette, service: Service, *, tokens: bool, max_body_bytes: int) -> None:
    """Serve the pipelines as MCP tools at /mcp on `app` (the service's app, so its bearer
    tokens guard them too), with the service's body limit. With tokens the token is the guard;
    without, only requests to a loopback host name are taken (the SDK's guard against DNS
    rebinding)."""
    from mcp.server.transport_security import TransportSecuritySettings

    server = pipelines_server(service)
    security = TransportSecuritySettings(enable_dns_rebinding_protection=False) if tokens else None
    mcp_app = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        stateless_http=True,
        json_response=True,
        transport_security=security,
        max_request_body_size=max_body_bytes,
    )
    from runner.serve.json_refusals import JsonRefusals

    for route in mcp_app.routes:  # the SDK's own plain-text refusals leave as the service's JSON
        route.app = JsonRefusals(route.app)  # type: ignore[attr-defined]  # the SDK's are Routes; BaseRoute has no app
    app.router.routes.extend(mcp_app.routes)
    served = app.router.lifespan_context

    @contextlib.asynccontextmanager
    async def lifespan(started: Any) -> AsyncIterator[None]:
        async with server.session_manager.run(), served(started):
            yield

    app.router.lifespan_context = lifespan


async def serve_stdio(service: Service) -> None:
    """`runner mcp serve`: the pipelines over this process's standard input and output."""
    await pipelines_server(service).run_stdio_async()


def _ask(service: Service, domain: str) -> Any:
    async def ask(
        question: Annotated[str, Field(description=QUESTION)],
        ctx: Context,
        session_id: Annotated[str | None, Field(description=SESSION)] = None,
    ) -> CallToolResult:
        try:
            result = await service.run_round(
                domain,
                question,
                session_id=session_id,
                client=_client(ctx),
                create=False,  # a session id comes from an earlier result, never the caller
            )
        except Exception as error:  # refused (busy, too long, unknown session…): said so
            refused = as_service_error(error)
            return _error(refused.message, refused.to_json())
        return tool_result(result)

    ask.__name__ = domain
    return ask


def _client(ctx: Context) -> Client:
    """Who asks: over HTTP the request's client (its bearer token, as on the other APIs); over
    stdio the one local user of the process."""
    request = getattr(ctx.request_context, "request", None)
    return client_of(request) if isinstance(request, Request) else LOCAL


def tool_result(result: dict[str, Any]) -> CallToolResult:
    """A round's result (`runner run --json`'s object) as the tool's result."""

    outcome = result["outcome"]
    session = result["session"]
    data = {
        "outcome": outcome,
        "session_id": session,
        "round": result["round"],
        "sources": result.get("sources") or [],
        "warnings": result.get("warnings") or [],
    }
    if outcome == "clarification":
        data["question"] = result["question"]
        text = (
            f"Clarifying question: {result['question']}\n"
            f"(Ask the user; send their answer as `question` with session_id {session!r}.)"
        )
    elif outcome == "answer":
        data["answer"] = result["answer"]
        text = result["answer"] or ""
    else:
        data["error"] = _failed(f"the round failed: {result.get('error')}").to_json()["error"]
        return _error(data["error"]["message"], data)
    return CallToolResult(content=[TextContent(text=text)], structured_content=data)


def _failed(message: str) -> ServiceError:
    return ServiceError(message)  # a round that ran and failed: the service's 500 shape


def _error(message: str, data: dict[str, Any] | None = None) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(text=message)], structured_content=data, is_error=True
    )


def _description(domain: str, description: str) -> str:
    what = description.strip() or f"Answers questions of the {domain} domain."
    return (
        f"{what} Returns the answer with its sources, or a clarifying question (outcome "
        "`clarification`) to put to the user and answer with the same session_id."
    )
