"""One HTTP client for every source: stdlib urllib, so the default install stays light.

What it promises (issue 13): separate connect and read timeouts plus a deadline for the whole body,
so no fetch hangs; retries with exponential backoff that honour `Retry-After` on 429 and 503; a
polite delay between two requests to the same host; a User-Agent naming paperatlas; proxies from
the environment (HTTP_PROXY / HTTPS_PROXY / NO_PROXY, read by urllib's ProxyHandler); and when the
host cannot be reached, an error within seconds that names the URL and the fix.
"""

from __future__ import annotations

import email.utils
import http.client
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode, urlsplit

from .. import __version__
from ..errors import PaperatlasError

USER_AGENT = f"paperatlas/{__version__} (+https://pypi.org/project/paperatlas/; personal paper library)"
RETRY_STATUS = {429, 500, 502, 503, 504}


class FetchError(PaperatlasError):
    """A source could not be fetched; `url` is the request that failed."""

    def __init__(self, message: str, fix: str = "", url: str = "") -> None:
        super().__init__(message, fix)
        self.url = url


def host_port(url: str) -> str:
    p = urlsplit(url)
    port = p.port or (443 if p.scheme == "https" else 80)
    return f"{p.hostname}:{port}"


@dataclass
class Response:
    url: str
    status: int
    headers: Mapping[str, str]
    body: bytes

    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")


def _timed_connection(base: type[http.client.HTTPConnection], connect: float, read: float) -> type:
    """An HTTP(S)Connection that connects under `connect` seconds, then reads under `read` per recv."""

    class Conn(base):  # type: ignore[misc, valid-type]
        def connect(self) -> None:
            self.timeout = connect
            super().connect()
            self.sock.settimeout(read)

    return Conn


class _HTTP(urllib.request.HTTPHandler):
    def __init__(self, connect: float, read: float) -> None:
        super().__init__()
        self._conn = _timed_connection(http.client.HTTPConnection, connect, read)

    def http_open(self, req: urllib.request.Request) -> Any:
        return self.do_open(self._conn, req)


class _HTTPS(urllib.request.HTTPSHandler):
    def __init__(self, connect: float, read: float) -> None:
        super().__init__()
        self._conn = _timed_connection(http.client.HTTPSConnection, connect, read)

    def https_open(self, req: urllib.request.Request) -> Any:
        return self.do_open(self._conn, req, context=self._context)


def retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header: a number of seconds or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (now if now is not None else time.time()))


class _Retry(Exception):
    def __init__(self, reason: str, wait: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.wait = wait


@dataclass
class HttpClient:
    """GET with timeouts, retries and politeness. `sleep` is injectable so tests can count waits."""

    connect_timeout: float = 10.0
    read_timeout: float = 30.0
    total_timeout: float = 120.0  # the whole body must arrive within this, however slowly it trickles
    retries: int = 4
    backoff: float = 1.0  # first wait; doubles each retry
    max_wait: float = 60.0  # cap on any one wait, Retry-After included
    delay: float = 0.0  # polite gap between two requests to the same host
    unreachable_retries: int = 1  # refused / no such host: one quick retry, then fail fast
    sleep: Callable[[float], None] = time.sleep
    user_agent: str = USER_AGENT
    stats: dict[str, int] = field(default_factory=lambda: {"requests": 0, "retries": 0, "bytes": 0})
    _last: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # ProxyHandler() with no argument reads HTTP_PROXY / HTTPS_PROXY / NO_PROXY from the environment
        self._opener = urllib.request.build_opener(
            urllib.request.ProxyHandler(),
            _HTTP(self.connect_timeout, self.read_timeout),
            _HTTPS(self.connect_timeout, self.read_timeout),
        )

    def get(self, url: str, params: Mapping[str, Any] | None = None, headers: Mapping[str, str] | None = None,
            what: str = "") -> Response:
        """The body of a 2xx answer, after retrying what is worth retrying. Raises FetchError."""
        if params:
            url += ("&" if "?" in url else "?") + urlencode({k: v for k, v in params.items() if v is not None})
        hdrs = {"User-Agent": self.user_agent, "Accept-Encoding": "identity", **(headers or {})}
        attempt, unreachable = 0, 0
        while True:
            self._polite(url)
            self.stats["requests"] += 1
            try:
                return self._once(url, hdrs)
            except _Retry as r:
                unreachable_now = r.reason.startswith("cannot connect")
                unreachable = unreachable + 1 if unreachable_now else unreachable
                out_of_tries = attempt >= self.retries or (unreachable_now and unreachable > self.unreachable_retries)
                if out_of_tries:
                    raise self._give_up(url, r, attempt + 1, what) from None
                wait = min(self.max_wait, r.wait if r.wait is not None else self.backoff * (2 ** attempt))
                if unreachable_now:
                    wait = min(wait, 1.0)
                attempt += 1
                self.stats["retries"] += 1
                self.sleep(wait)

    def _polite(self, url: str) -> None:
        if self.delay <= 0:
            return
        host = host_port(url)
        last = self._last.get(host)
        now = time.monotonic()
        if last is not None and now - last < self.delay:
            self.sleep(self.delay - (now - last))
        self._last[host] = time.monotonic()

    def _once(self, url: str, headers: Mapping[str, str]) -> Response:
        req = urllib.request.Request(url, headers=dict(headers))
        start = time.monotonic()
        try:
            resp = self._opener.open(req)
        except urllib.error.HTTPError as e:
            if e.code == 304:  # If-None-Match / If-Modified-Since: nothing changed
                return Response(url, 304, dict(e.headers.items()) if e.headers else {}, b"")
            wait = retry_after(e.headers.get("Retry-After")) if e.headers else None
            if e.code in RETRY_STATUS:
                raise _Retry(f"HTTP {e.code} {e.reason}", wait) from None
            raise FetchError(
                f"{host_port(url)} answered HTTP {e.code} {e.reason} for {url}",
                "check the source arguments (venue id, category, year) and --base-url" if e.code in (400, 404)
                else "try again later, or ask the service operator", url) from None
        except urllib.error.URLError as e:
            # urllib wraps what fails while connecting and sending (refused, no such host, connect
            # timeout) as URLError; a server that connects but is slow to answer raises TimeoutError
            reason = "connect timed out" if isinstance(e.reason, (TimeoutError, socket.timeout)) else e.reason
            raise _Retry(f"cannot connect ({reason})") from None
        except (TimeoutError, socket.timeout):
            raise _Retry("timed out") from None
        except (ConnectionError, http.client.HTTPException, OSError) as e:
            raise _Retry(f"connection failed ({type(e).__name__}: {e})") from None
        with resp:
            chunks: list[bytes] = []
            try:
                while True:
                    if time.monotonic() - start > self.total_timeout:
                        raise _Retry(f"the body took over {self.total_timeout:.0f} s")
                    chunk = resp.read(65536)
                    if not chunk:
                        break
                    chunks.append(chunk)
            except http.client.IncompleteRead as e:
                raise _Retry(f"the body was cut off after {len(b''.join(chunks)) + len(e.partial)} bytes") from None
            except (TimeoutError, socket.timeout):
                raise _Retry("timed out reading the body") from None
            except (ConnectionError, http.client.HTTPException, OSError) as e:
                raise _Retry(f"the connection broke while reading ({type(e).__name__})") from None
            body = b"".join(chunks)
            # http.client's read(amt) returns short data instead of raising when the peer hangs up early
            expected = resp.headers.get("Content-Length")
            if expected and expected.isdigit() and len(body) < int(expected):
                raise _Retry(f"the body was cut off after {len(body)} of {expected} bytes")
            self.stats["bytes"] += len(body)
            return Response(resp.geturl(), resp.status, dict(resp.headers.items()), body)

    def _give_up(self, url: str, r: _Retry, tries: int, what: str) -> FetchError:
        where = host_port(url)
        if r.reason.startswith("cannot connect"):
            return FetchError(
                f"cannot reach {where} ({url}): {r.reason.removeprefix('cannot connect ').strip('()')}",
                "check the network connection and the address (--base-url for a mirror); behind a proxy, "
                "set HTTPS_PROXY / HTTP_PROXY", url)
        return FetchError(
            f"{what or 'fetch'} failed at {where}: {r.reason} ({tries} tries; {url})",
            "try again later; a re-run resumes where this one stopped" +
            ("" if not r.reason.startswith("HTTP 429") else " (the service asks for fewer requests: raise --delay)"),
            url)
