"""The served app's connections are bounded in time and number.

uvicorn closes an idle keep-alive connection after `timeout_keep_alive`, but a connection that is
sending its request headers (one byte at a time, or not at all after the first) is never timed out,
and every connection it accepts holds a file descriptor: ten thousand slow-header clients exhausted
the process's descriptors (Errno 24) and nobody else could connect. This protocol is uvicorn's own
(httptools) with two guards:

- a header deadline: a request's headers must be complete within HEADER_TIMEOUT seconds of the
  connection (or of the previous response on a keep-alive connection), else the connection closes;
- a connection cap: a connection beyond MAX_CONNECTIONS open ones is closed as soon as it is accepted,
  so the process keeps descriptors for its library, its models and the connections it serves.
"""

from __future__ import annotations

import asyncio
import resource
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from .. import settings

MAX_CONNECTIONS_CEILING = 4_000  # open connections per server process


def header_timeout() -> float:
    """Seconds a request's headers may take: PAPERATLAS_SERVE_HEADER_TIMEOUT, default 10."""
    return float(settings.get("serve_header_timeout"))


def max_connections() -> int:
    """Open connections one server process keeps: PAPERATLAS_SERVE_MAX_CONNECTIONS, default half the
    process's descriptor limit (the rest is for the library, its models and its threads), at most 4,000."""
    cap = int(settings.get("serve_max_connections"))
    if cap > 0:
        return cap
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft <= 0:
        return MAX_CONNECTIONS_CEILING
    return max(16, min(MAX_CONNECTIONS_CEILING, soft // 2))


class GuardedHttpTools(HttpToolsProtocol):
    """uvicorn's httptools protocol with a header deadline and a connection cap (see the module)."""

    HEADER_TIMEOUT = header_timeout()
    MAX_CONNECTIONS = max_connections()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.MAX_CONNECTIONS:
            transport.abort()  # at once: no response to write, the descriptor is freed now
            return
        self._arm()

    def _arm(self) -> None:
        self._disarm()
        self._header_timer = self.loop.call_later(self.HEADER_TIMEOUT, self._headers_too_slow)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_too_slow(self) -> None:
        self._header_timer = None
        if not self.transport.is_closing():
            self.transport.abort()

    def on_headers_complete(self) -> None:
        self._disarm()
        super().on_headers_complete()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm()  # the next request on this keep-alive connection has the same deadline

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)
