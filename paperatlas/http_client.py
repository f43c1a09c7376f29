"""One HTTP client for every source: stdlib urllib, so the default install stays light.

What it promises: separate connect and read timeouts plus a deadline for the whole request (headers,
body and chunks, however slowly they trickle), so no fetch hangs; a cap on the body's size, so a
hostile or broken server cannot fill the memory; redirects only to http(s) and only within the
requested host (or the hosts listed in $PAPERATLAS_FETCH_REDIRECT_HOSTS); retries with exponential
backoff that honour `Retry-After` on 429 and 503; a polite delay between two requests to the same
host; a User-Agent naming paperatlas; proxies from the environment (HTTP_PROXY / HTTPS_PROXY /
NO_PROXY, read by urllib's ProxyHandler); and when the host cannot be reached, an error within
seconds that names the URL and the fix.
"""

from __future__ import annotations

import email.utils
import http.client
import socket
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode, urlsplit

from . import __version__
from .deadline import Deadline
from . import settings
from .errors import PaperatlasError


# how many pages one fetch may follow before it stops and says so (a server that pages forever, or a
# cursor that never ends, cannot keep a fetch going); every paging reader shares the cap
MAX_PAGES = 1000
MAX_PAGES_ENV = "PAPERATLAS_FETCH_MAX_PAGES"


def max_pages_default() -> int:
    return int(settings.get("fetch_max_pages"))


USER_AGENT = f"paperatlas/{__version__} (+https://pypi.org/project/paperatlas/; personal paper library)"
RETRY_STATUS = {429, 500, 502, 503, 504}
# No paper list comes near this (the largest conference JSON files are tens of MB); a body past it
# is refused while it arrives, before it costs more memory than the cap
MAX_BYTES = 256 << 20
MAX_BYTES_ENV = "PAPERATLAS_FETCH_MAX_BYTES"
REDIRECT_HOSTS_ENV = "PAPERATLAS_FETCH_REDIRECT_HOSTS"


def max_bytes_default() -> int:
    return int(settings.get("fetch_max_bytes"))


def redirect_hosts_default() -> tuple[str, ...]:
    return tuple(h.strip().lower() for h in settings.get("fetch_redirect_hosts").split(",") if h.strip())


class FetchError(PaperatlasError):
    """A source could not be fetched; `url` is the request that failed, `status` its HTTP status (0:
    no answer), `headers` the answer's headers when there was one; `transient` when trying again may
    succeed, unlike a refused redirect, a body over the cap or a trickle past the deadline."""

    def __init__(
        self,
        message: str,
        fix: str = "",
        url: str = "",
        status: int = 0,
        headers: Mapping[str, str] | None = None,
        reachable: bool = True,
        transient: bool = False,
    ) -> None:
        super().__init__(message, fix)
        self.url = url
        self.status = status
        self.headers: Mapping[str, str] = headers or {}
        self.reachable = reachable
        self.transient = transient  # worth trying again later (429, 5xx, a cut or timed-out read, no route)


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


def _timed_connection(
    base: type[http.client.HTTPConnection], connect: float, read: float, deadline: Callable[[], Deadline | None]
) -> type:
    """An HTTP(S)Connection that connects under `connect` seconds, then reads under `read` per recv,
    its socket watched by the current request's deadline."""

    class Conn(base):  # type: ignore[misc, valid-type]
        def connect(self) -> None:
            self.timeout = connect
            super().connect()
            self.sock.settimeout(read)
            d = deadline()
            if d is not None:
                d.watch(self.sock)

    return Conn


class _HTTP(urllib.request.HTTPHandler):
    def __init__(self, connect: float, read: float, deadline: Callable[[], Deadline | None]) -> None:
        super().__init__()
        self._conn = _timed_connection(http.client.HTTPConnection, connect, read, deadline)

    def http_open(self, req: urllib.request.Request) -> Any:
        return self.do_open(self._conn, req)


class _HTTPS(urllib.request.HTTPSHandler):
    def __init__(self, connect: float, read: float, deadline: Callable[[], Deadline | None]) -> None:
        super().__init__()
        self._conn = _timed_connection(http.client.HTTPSConnection, connect, read, deadline)

    def https_open(self, req: urllib.request.Request) -> Any:
        return self.do_open(self._conn, req, context=self._context)


def redirect_refusal(origin: str, target: str, allowed_hosts: tuple[str, ...] = ()) -> str:
    """Why a redirect from `origin` to `target` is not followed ("" when it is): only http(s), only
    to the same host and port (http -> https on the same host is an upgrade, not a move), or to a
    host named in `allowed_hosts`. A source answering with a redirect to another port or machine
    could otherwise make paperatlas fetch (and store) what an internal service says."""
    o, t = urlsplit(origin), urlsplit(target)
    if t.scheme.lower() not in ("http", "https"):
        return f"it leads to a {t.scheme or 'relative'}: address, and only http(s) is fetched"
    if o.scheme.lower() == "https" and t.scheme.lower() == "http":
        return "it leads from https to plain http"
    t_host = (t.hostname or "").lower()
    if t_host in allowed_hosts:
        return ""
    if t_host != (o.hostname or "").lower():
        return f"it leads to another host ({t_host or '?'})"
    if host_port(origin) != host_port(target) and not (
        o.scheme == "http" and t.scheme == "https" and t.port in (None, 443)
    ):
        return f"it leads to another port ({host_port(target)})"
    return ""


class _Redirects(urllib.request.HTTPRedirectHandler):
    """Follows a redirect only when redirect_refusal() has nothing against it."""

    max_redirections = 5

    def __init__(self, origin: Callable[[], str], allowed_hosts: tuple[str, ...]) -> None:
        super().__init__()
        self._origin = origin
        self._allowed = allowed_hosts

    def redirect_request(
        self, req: urllib.request.Request, fp: Any, code: int, msg: str, headers: Any, newurl: str
    ) -> urllib.request.Request | None:
        from urllib.parse import urljoin

        target = urljoin(req.full_url, newurl)
        why = redirect_refusal(self._origin() or req.full_url, target, self._allowed)
        if why:
            fp.close()
            raise FetchError(
                f"{host_port(req.full_url)} redirected {req.full_url} to {target}; not followed: {why}",
                f"if that host really serves the source, fetch from it with --base-url, or list it in "
                f"{REDIRECT_HOSTS_ENV}=host1,host2",
                req.full_url,
                status=code,
            )
        return super().redirect_request(req, fp, code, msg, headers, newurl)


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
    def __init__(
        self, reason: str, wait: float | None = None, status: int = 0, headers: Mapping[str, str] | None = None
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.wait = wait
        self.status = status
        self.headers = headers or {}


@dataclass
class HttpClient:
    """GET with timeouts, retries and politeness. `sleep` is injectable so tests can count waits."""

    connect_timeout: float = 10.0
    read_timeout: float = 30.0
    total_timeout: float = (
        120.0  # the whole request (headers and body) must end within this, however slowly it trickles
    )
    max_bytes: int = field(default_factory=max_bytes_default)  # a longer body is refused as it arrives
    redirect_hosts: tuple[str, ...] = field(default_factory=redirect_hosts_default)  # besides the requested host
    retries: int = 4
    backoff: float = 1.0  # first wait; doubles each retry
    max_wait: float = 60.0  # cap on any one wait, Retry-After included
    # a Retry-After longer than this is not waited for: the request fails at once, the answer's
    # headers on the FetchError (a caller with other work, e.g. other hosts, goes on with it)
    give_up_after: float | None = None
    delay: float = 0.0  # polite gap between two requests to the same host
    unreachable_retries: int = 1  # refused / no such host: one quick retry, then fail fast
    sleep: Callable[[float], None] = time.sleep
    user_agent: str = USER_AGENT
    stats: dict[str, int] = field(default_factory=lambda: {"requests": 0, "retries": 0, "bytes": 0})
    _last: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._local = threading.local()  # this thread's request: its deadline and first URL

        def deadline() -> Deadline | None:
            return getattr(self._local, "deadline", None)

        # ProxyHandler() with no argument reads HTTP_PROXY / HTTPS_PROXY / NO_PROXY from the environment
        self._opener = urllib.request.build_opener(
            urllib.request.ProxyHandler(),
            _HTTP(self.connect_timeout, self.read_timeout, deadline),
            _HTTPS(self.connect_timeout, self.read_timeout, deadline),
            _Redirects(lambda: getattr(self._local, "origin", ""), tuple(h.lower() for h in self.redirect_hosts)),
        )

    def get(
        self,
        url: str,
        params: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
        what: str = "",
    ) -> Response:
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
                if r.wait is not None and self.give_up_after is not None and r.wait > self.give_up_after:
                    out_of_tries = True
                if out_of_tries:
                    raise self._give_up(url, r, attempt + 1, what) from None
                wait = min(self.max_wait, r.wait if r.wait is not None else self.backoff * (2**attempt))
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
        """One request under the whole-request deadline. Running past it is not retried: a server
        that trickles once trickles again, and each retry would cost the whole deadline anew."""
        guard = Deadline(self.total_timeout)
        self._local.deadline, self._local.origin = guard, url
        try:
            resp = self._exchange(url, headers)
        except BaseException:
            if guard.expired:
                raise self._too_slow(url) from None
            raise
        finally:
            guard.cancel()
            self._local.deadline = self._local.origin = None
        if guard.expired:  # a body read until the connection closed ends quietly when it is shut
            raise self._too_slow(url)
        return resp

    def _too_slow(self, url: str) -> FetchError:
        return FetchError(
            f"{host_port(url)} did not finish answering {url} within {self.total_timeout:g} s "
            "(headers and body together)",
            "the server sends too slowly: try again later (a re-run resumes where this one stopped), "
            "or allow more time with --deadline",
            url,
        )

    def _too_big(self, url: str, what: str) -> FetchError:
        return FetchError(
            f"{host_port(url)} answered {url} with {what}: more than the {self.max_bytes:,}-byte cap on one answer",
            f"check --base-url points at the service; if the source really is that large, raise the cap with "
            f"{MAX_BYTES_ENV}=N",
            url,
        )

    def _exchange(self, url: str, headers: Mapping[str, str]) -> Response:
        req = urllib.request.Request(url, headers=dict(headers))
        try:
            resp = self._opener.open(req)
        except urllib.error.HTTPError as e:
            hdrs = dict(e.headers.items()) if e.headers else {}
            if e.code == 304:  # If-None-Match / If-Modified-Since: nothing changed
                return Response(url, 304, hdrs, b"")
            wait = retry_after(e.headers.get("Retry-After")) if e.headers else None
            if e.code in RETRY_STATUS:
                raise _Retry(f"HTTP {e.code} {e.reason}", wait, e.code, hdrs) from None
            raise FetchError(
                f"{host_port(url)} answered HTTP {e.code} {e.reason} for {url}",
                "check the source arguments (venue id, category, year) and --base-url"
                if e.code in (400, 404)
                else "try again later, or ask the service operator",
                url,
                status=e.code,
                headers=hdrs,
            ) from None
        except urllib.error.URLError as e:
            # urllib wraps what fails while connecting and sending (refused, no such host, connect
            # timeout) as URLError; a server that connects but is slow to answer raises TimeoutError
            reason = "connect timed out" if isinstance(e.reason, (TimeoutError, socket.timeout)) else e.reason
            raise _Retry(f"cannot connect ({reason})") from None
        except TimeoutError:
            raise _Retry("timed out") from None
        except (ConnectionError, http.client.HTTPException, OSError) as e:
            raise _Retry(f"connection failed ({type(e).__name__}: {e})") from None
        with resp:
            expected = resp.headers.get("Content-Length")
            if expected and expected.isdigit() and int(expected) > self.max_bytes:
                raise self._too_big(url, f"a body of {int(expected):,} bytes")
            body = bytearray()
            try:
                while True:
                    chunk = resp.read(65536)
                    if not chunk:
                        break
                    body += chunk
                    if len(body) > self.max_bytes:  # an endless chunked stream ends here too
                        raise self._too_big(url, "a longer body")
            except http.client.IncompleteRead as e:
                raise _Retry(f"the body was cut off after {len(body) + len(e.partial)} bytes") from None
            except TimeoutError:
                raise _Retry("timed out reading the body") from None
            except (ConnectionError, http.client.HTTPException, OSError) as e:
                raise _Retry(f"the connection broke while reading ({type(e).__name__})") from None
            # http.client's read(amt) returns short data instead of raising when the peer hangs up early
            if expected and expected.isdigit() and len(body) < int(expected):
                raise _Retry(f"the body was cut off after {len(body)} of {expected} bytes")
            self.stats["bytes"] += len(body)
            return Response(resp.geturl(), resp.status, dict(resp.headers.items()), bytes(body))

    def _give_up(self, url: str, r: _Retry, tries: int, what: str) -> FetchError:
        where = host_port(url)
        if r.reason.startswith("cannot connect"):
            return FetchError(
                f"cannot reach {where} ({url}): {r.reason.removeprefix('cannot connect ').strip('()')}",
                "check the network connection and the address (--base-url for a mirror); behind a proxy, "
                "set HTTPS_PROXY / HTTP_PROXY",
                url,
                reachable=False,
                transient=True,
            )
        return FetchError(
            f"{what or 'fetch'} failed at {where}: {r.reason} ({tries} tries; {url})",
            "try again later; a re-run resumes where this one stopped"
            + ("" if not r.reason.startswith("HTTP 429") else " (the service asks for fewer requests: raise --delay)"),
            url,
            status=r.status,
            headers=r.headers,
            transient=True,
        )
