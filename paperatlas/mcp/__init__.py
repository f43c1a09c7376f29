"""`paperatlas mcp`: the library as a Model Context Protocol server, for AI assistants.

Built on the official `mcp` SDK (MCPServer). `create_server(library)` returns the server;
`paperatlas mcp` runs it over stdio (default) or streamable HTTP (`--http PORT`). The SDK is
imported only when a server is made, so other commands do not pay for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from ..library import Library

__all__ = ["create_server"]


def create_server(library: Library, read_only: bool = False, name: str = "paperatlas") -> MCPServer:
    """An MCP server whose tools and resources all go through `library` (see server.create_server)."""
    from .server import create_server as make

    return make(library, read_only=read_only, name=name)
