"""`paperatlas mcp`: the library as a Model Context Protocol server, for AI assistants.

Built on the official `mcp` SDK (MCPServer). `create_server(library)` returns the server;
`paperatlas mcp` runs it over stdio (default) or streamable HTTP (`--http PORT`).
"""

from __future__ import annotations

from .server import create_server

__all__ = ["create_server"]
