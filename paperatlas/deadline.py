"""A deadline for a whole network exchange, however slowly the other side sends.

A per-recv timeout cannot enforce one: a peer sending one byte a second never lets a recv time out,
and a buffered read waits for its whole buffer. So a timer shuts down the exchange's sockets when
the deadline passes, and whatever read was waiting then returns (or fails) at once. Used by the
fetchers' HTTP client and by the SMTP client.
"""

from __future__ import annotations

import socket
import threading


class Deadline:
    """Started on creation; `watch()` the sockets it covers, `cancel()` when the exchange is done,
    then `expired` says whether it was the deadline that ended it."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.expired = False
        self._socks: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True
        self._timer.start()

    def watch(self, sock: socket.socket) -> None:
        with self._lock:
            self._socks.append(sock)
            if self.expired:
                _shut(sock)

    def _expire(self) -> None:
        with self._lock:
            self.expired = True
            for sock in self._socks:
                _shut(sock)

    def cancel(self) -> None:
        self._timer.cancel()


def _shut(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:  # already closed
        pass
