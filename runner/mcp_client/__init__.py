"""Tools of MCP servers, from runner's side: the servers a pipeline declares under
`mcp_servers`, started once per process and reused (hub.py), what runner reads of their
answers (replies.py), how a server block becomes a command or a connection (settings.py), and
`runner validate --online`'s checks of `mcp` tools against the servers' listings (online.py).

The SDK (the `mcp` extra) is imported only when a server is first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from runner.mcp_client.replies import ServerTool, ToolReply
from runner.mcp_client.settings import McpError, describe

if TYPE_CHECKING:
    from runner.mcp_client.hub import Hub

__all__ = ["McpError", "ServerTool", "ToolReply", "connections", "describe"]


def connections() -> Hub:
    """The process's connections (imported on first use: it registers their closing at exit)."""
    from runner.mcp_client.hub import HUB

    return HUB
