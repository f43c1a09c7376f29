"""Hosts, both ways: which Host (and Origin) headers a server on this machine answers (the guard
against DNS rebinding that the web server and the MCP HTTP server share), and how politely
paperatlas asks other hosts for files (`polite_pause`: the one table of per-host pauses).

A hostile page whose name resolves to 127.0.0.1 still sends its own name as Host, so a server
answers only names its owner configured: loopback names by default, `--allowed-host` for more."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from urllib.parse import urlsplit

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


def host_name(host_header: str) -> str:
    """ "example.org:8000" -> "example.org", "[::1]:8000" -> "::1" (lower case)."""
    h = host_header.strip().lower()
    if h.startswith("["):
        return h[1:].split("]", 1)[0]
    return h.rsplit(":", 1)[0] if h.count(":") == 1 else h


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
        return True
    except ValueError:
        return False


class HostCheck:
    """Which Host headers are served. DNS rebinding makes a hostile name resolve to this server,
    so only names the owner configured are served: loopback names by default, `--allowed-host`
    for more ("*" for any). An IP literal is always served: a browser that asked for an address
    is on that address's own origin, which no rebinding page can be."""

    def __init__(self, allowed: Iterable[str] = ()) -> None:
        names = {host_name(a) for a in allowed if a.strip()}
        self.any = "*" in names
        self.names = set(LOOPBACK_NAMES) | names

    def allows(self, host_header: str | None) -> bool:
        if self.any:
            return True
        if not host_header:
            return False  # HTTP/1.1 requires it; a missing Host is never a browser
        name = host_name(host_header)
        return name in self.names or _is_ip(name) or name.endswith(".localhost")


def is_loopback_name(host_header: str | None) -> bool:
    """A Host header that names this machine: localhost, *.localhost or a loopback address. A page
    the browser loaded from any other name (a rebinding page under `--allowed-host '*'`, a name
    given with --allowed-host) may reach the server, but never speaks for its owner."""
    if not host_header:
        return False
    name = host_name(host_header)
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def foreign_origin(origin: str | None, host_header: str | None) -> bool:
    """Whether a browser's Origin header names another site than the Host it asked for (a page on
    another site, or "null": a sandboxed frame or a file:// page). No Origin: not a browser's
    cross-site request."""
    if origin is None:
        return False
    if origin == "null":
        return True
    try:
        parts = urlsplit(origin)
    except ValueError:
        return True
    return parts.scheme not in ("http", "https") or parts.netloc.lower() != (host_header or "").lower()


# Seconds between two requests to a host, for hosts that publish a rate: arXiv asks robots for no
# more than one request every three seconds (https://info.arxiv.org/help/api/tou.html). A host not
# listed gets the pause the caller asks for (`fulltext fetch --delay`).
POLITE_PAUSES: dict[str, float] = {
    "arxiv.org": 3.0,
}


def polite_pause(host: str, default: float) -> float:
    """The pause between two requests to `host` (a name, or name:port): the larger of `default` and
    what the host asks for; a subdomain (export.arxiv.org) asks what its domain asks."""
    name = host_name(host)
    asked = max((s for d, s in POLITE_PAUSES.items() if name == d or name.endswith("." + d)), default=0.0)
    return max(default, asked)
