"""The MCP server over streamable HTTP, behind the same Host and Origin guard as the web server.

The SDK checks Host and Origin only when it listens on 127.0.0.1, localhost or ::1; on any other
address (127.0.0.2, a LAN address) a page whose name resolves to this machine (DNS rebinding), or a
page on another site, could call the tools, `like` included. Every request goes through
`HostGuard` here first, whatever the address."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from starlette.types import ASGIApp, Receive, Scope, Send

from ..hosts import HostCheck, foreign_origin


class HostGuard:
    """Refuse a request for a host name this server does not answer to (421), or one a page on
    another site sent (an Origin that is not this server, or "null": 403)."""

    def __init__(self, app: ASGIApp, allowed_hosts: Sequence[str] = ()) -> None:
        self.app = app
        self.hosts = HostCheck(allowed_hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        host = headers.get("host")
        if not self.hosts.allows(host):
            await _refuse(
                send,
                421,
                f"this MCP server does not answer to the host name {host!r}",
                "connect by an address it serves (127.0.0.1, localhost or its IP address), or restart "
                "`paperatlas mcp --http` with --allowed-host NAME for the name you use",
            )
            return
        if foreign_origin(headers.get("origin"), host):
            await _refuse(
                send,
                403,
                "a request from another site's page is refused",
                "MCP clients send no Origin header; a web page may not call this server",
            )
            return
        await self.app(scope, receive, send)


async def _refuse(send: Send, status: int, message: str, fix: str) -> None:
    body = json.dumps({"error": message, "fix": fix, "status": status}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


def http_app(server: Any, allowed_hosts: Sequence[str] = ()) -> ASGIApp:
    """The server's streamable-HTTP app at /mcp, behind HostGuard (the SDK's own check, which
    covers only three names, is replaced by it)."""
    from mcp.server.transport_security import TransportSecuritySettings

    app = server.streamable_http_app(
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False)
    )
    return HostGuard(app, allowed_hosts)


def run_http(server: Any, host: str, port: int, allowed_hosts: Sequence[str] = ()) -> None:
    import uvicorn

    from ..web.guard import GuardedHttpTools, max_connections

    # the web server's bounds: a header deadline and a connection cap (slow-header clients exhaust nothing)
    uvicorn.run(
        http_app(server, allowed_hosts),
        host=host,
        port=port,
        log_level="warning",
        http=GuardedHttpTools,
        limit_concurrency=max_connections(),
    )
