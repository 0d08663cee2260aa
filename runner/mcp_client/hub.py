"""The process's connections to MCP servers, on one event loop in a thread of their own.

A server is started (or connected to) on its first use and kept for every later round of every
pipeline that names the same server, whichever event loop the round runs on: `runner chat`
starts a loop per round, a service runs its rounds on uvicorn's, and an SDK client must be
closed in the task that opened it. The connections are closed when the process exits.

Every wait is bounded by the server's `timeout_s`, and a call fails at once when its server's
connection ends (the process died, the endpoint went away): a tool never hangs on a server.
A server that stopped is started again on its next use.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import sys
import threading
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from contextlib import AsyncExitStack, suppress
from importlib.metadata import version
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

from runner.mcp_client.replies import ServerTool, ToolReply
from runner.mcp_client.settings import McpError, command_of, describe, expanded

if TYPE_CHECKING:
    from runner.config.model import McpServer

Result = TypeVar("Result")
STOP_WAIT_S = 5.0  # how long closing a connection may take when the process exits
MAX_TOOL_PAGES = 100  # a server whose listing never ends is read this far


def reason(error: BaseException) -> str:
    """What went wrong, from the innermost error an SDK task group wrapped."""
    while getattr(error, "exceptions", None):  # an exception group
        error = error.exceptions[0]  # type: ignore[attr-defined]  # an ExceptionGroup's (3.11+)
    text = str(error) or type(error).__name__
    return text if isinstance(error, McpError) else f"{type(error).__name__}: {text}"


def _server_log() -> TextIO:
    """Where a stdio server's own messages go: runner's stderr, or the process's when something
    replaced it with a stream that is no file (a notebook, a test runner's capture)."""
    for stream in (sys.stderr, sys.__stderr__):
        try:
            if stream is not None:
                stream.fileno()
                return stream
        except (AttributeError, OSError, ValueError):
            continue
    return open(os.devnull, "w")


def _retrieved(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()


def _closed(error: BaseException) -> bool:
    """The SDK's way of saying the server went away mid-request."""
    from mcp.shared.exceptions import MCPError
    from mcp_types import CONNECTION_CLOSED

    return isinstance(error, MCPError) and error.code == CONNECTION_CLOSED


def _key(server: McpServer) -> tuple[Any, ...]:
    """Two pipelines that name the same server alike share its connection."""
    return (
        server.name,
        server.command,
        tuple(server.args),
        tuple(sorted(server.env.items())),
        server.url,
        tuple(sorted(server.headers.items())),
        str(server.folder),
        server.timeout_s,
        server.start_timeout_s,
    )


class Connection:
    """One server's client, owned by a task of the hub's loop from start to stop."""

    def __init__(self, server: McpServer) -> None:
        self.server = server
        self.tools: dict[str, ServerTool] | None = None  # listed once per start
        self._owner: asyncio.Task[None] | None = None
        self._ready: asyncio.Future[Any] | None = None
        self._stop = asyncio.Event()
        self._ended = ""  # why the last connection ended
        self._closed = False  # the server closed the connection: start it again on next use

    async def client(self) -> Any:
        """The connected SDK client, (re)started when it is not running."""
        if self._closed:
            self._closed = False
            await self.stop()
        if self._owner is None or self._owner.done():
            self.tools = None
            self._stop = asyncio.Event()
            self._ready = asyncio.get_running_loop().create_future()
            self._owner = asyncio.create_task(self._own(self._ready))
        assert self._ready is not None
        try:
            return await asyncio.wait_for(asyncio.shield(self._ready), self.server.start_timeout_s)
        except asyncio.TimeoutError:
            self._owner.cancel()
            self._ready.add_done_callback(_retrieved)  # what the start says next, nobody hears
            verb = "answer" if self.server.url else "start"
            raise McpError(
                f"{describe(self.server)} did not {verb} within {self.server.start_timeout_s:g} "
                "s; check that it runs on its own, or raise its `start_timeout_s`"
            ) from None

    async def within(self, what: str, call: Callable[[Any], Awaitable[Result]]) -> Result:
        """`call(client)`, failed when it outlasts `timeout_s` or the connection ends first."""
        client = await self.client()
        assert self._owner is not None
        owner = self._owner
        running = asyncio.ensure_future(call(client))
        timeout = self.server.timeout_s
        done, _ = await asyncio.wait(
            {running, owner}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
        )
        if running in done:
            try:
                return running.result()
            except Exception as error:
                if _closed(error):
                    self._closed = True
                    raise self._closed_during(what) from None
                failed = f"{describe(self.server)}: {what} failed: {reason(error)}"
                raise McpError(failed) from error
        running.cancel()
        if owner in done:
            raise self._closed_during(what)
        raise McpError(
            f"{describe(self.server)}: {what} took more than {timeout:g} s (the server's "
            "`timeout_s`)"
        )

    def _closed_during(self, what: str) -> McpError:
        return McpError(
            f"{describe(self.server)} closed the connection during {what} (did it exit?); it "
            "is started again when next used"
        )

    async def stop(self) -> None:
        owner = self._owner
        if owner is None or owner.done():
            return
        self._stop.set()
        with suppress(asyncio.TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(owner, STOP_WAIT_S)

    async def _own(self, ready: asyncio.Future[Any]) -> None:
        try:
            from mcp import Client
            from mcp_types import Implementation

            async with AsyncExitStack() as stack:
                transport = await self._transport(stack)
                client = Client(
                    transport,
                    read_timeout_seconds=self.server.timeout_s,
                    client_info=Implementation(name="runner", version=version("runner")),
                    cache=None,  # runner keeps the listing itself, once per start
                )
                await stack.enter_async_context(client)
                ready.set_result(client)
                await self._stop.wait()
            self._ended = "it was stopped"
        except BaseException as error:  # the transport's task group ends us when the server dies
            self._ended = reason(error)
            if isinstance(error, ModuleNotFoundError) and (error.name or "").startswith("mcp"):
                self._ended = "the `mcp` extra is not installed: pip install 'runner[mcp]'"
            if not ready.done():
                verb = "reached" if self.server.url else "started"
                ready.set_exception(
                    McpError(f"{describe(self.server)} could not be {verb}: {self._ended}")
                )
            if isinstance(error, (KeyboardInterrupt, SystemExit)):
                raise

    async def _transport(self, stack: AsyncExitStack) -> Any:
        server = self.server
        where = f"mcp_servers.{server.name}"
        if server.url is not None:
            import httpx2
            from mcp.client.streamable_http import streamable_http_client

            http = await stack.enter_async_context(
                httpx2.AsyncClient(
                    headers=expanded(server.headers, f"{where}.headers"),
                    timeout=httpx2.Timeout(server.timeout_s, read=300.0),
                )
            )
            return streamable_http_client(server.url, http_client=http)
        from mcp.client.stdio import StdioServerParameters, stdio_client

        parameters = StdioServerParameters(
            command=command_of(server),
            args=list(server.args),
            env=expanded(server.env, f"{where}.env"),
            cwd=server.folder,
        )
        return stdio_client(parameters, errlog=_server_log())


class Hub:
    """Every connection of the process, by server; its own loop runs in a daemon thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._connections: dict[tuple[Any, ...], Connection] = {}

    # --- from any event loop, or none ----------------------------------------------------

    async def tools(self, server: McpServer) -> dict[str, ServerTool]:
        """The server's tools by name, listed once per start of the server."""
        return await self._submit(self._tools(server))

    async def call(self, server: McpServer, tool: str, arguments: Mapping[str, Any]) -> ToolReply:
        return await self._submit(self._call(server, tool, dict(arguments)))

    def tools_now(self, server: McpServer) -> dict[str, ServerTool]:
        """`tools`, for a caller without an event loop (the command line)."""
        return asyncio.run_coroutine_threadsafe(self._tools(server), self._running()).result()

    def stop(self) -> None:
        """Close every connection (stdio servers exit), then the loop."""
        with self._lock:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None or thread is None:
            return
        connections = list(self._connections.values())
        self._connections.clear()

        async def close_all() -> None:
            await asyncio.gather(*(connection.stop() for connection in connections))

        with suppress(Exception):  # exiting anyway: a server that does not stop dies with us
            asyncio.run_coroutine_threadsafe(close_all(), loop).result(STOP_WAIT_S * 2)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(STOP_WAIT_S)

    # --- on the hub's loop -----------------------------------------------------------------

    async def _submit(self, work: Coroutine[Any, Any, Result]) -> Result:
        future = asyncio.run_coroutine_threadsafe(work, self._running())
        return await asyncio.wrap_future(future)

    def _running(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name="runner-mcp", daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
            return self._loop

    def _connection(self, server: McpServer) -> Connection:
        key = _key(server)
        if key not in self._connections:
            self._connections[key] = Connection(server)
        return self._connections[key]

    async def _tools(self, server: McpServer) -> dict[str, ServerTool]:
        connection = self._connection(server)
        await connection.client()  # a restart forgets the listing
        if connection.tools is None:
            listed = await connection.within("the listing of its tools", _list_tools)
            connection.tools = {tool.name: tool for tool in listed}
        return connection.tools

    async def _call(self, server: McpServer, tool: str, arguments: dict[str, Any]) -> ToolReply:
        connection = self._connection(server)

        async def call(client: Any) -> ToolReply:
            return ToolReply.of(await client.call_tool(tool, arguments))

        return await connection.within(f"the call of its tool {tool!r}", call)


async def _list_tools(client: Any) -> list[ServerTool]:
    tools: list[ServerTool] = []
    cursor = None
    for _ in range(MAX_TOOL_PAGES):
        page = await client.list_tools(cursor=cursor)
        tools.extend(ServerTool.of(tool) for tool in page.tools)
        cursor = page.next_cursor
        if cursor is None:
            break
    return tools


HUB = Hub()
atexit.register(HUB.stop)
