"""One client for any OpenAI-compatible chat endpoint (llama.cpp's server, ollama, vLLM, LM Studio,
DeepSeek, Qwen, Kimi, GLM, OpenAI...): `POST {base}/chat/completions`, optionally streamed.

Stdlib only (http.client), so the default install stays light. What it promises: nothing is sent
unless an endpoint is configured; a connect timeout of a few seconds, so an unreachable endpoint
fails fast; retries with exponential backoff on 429/5xx and dropped connections (honouring
Retry-After); at most `concurrency` requests in flight per endpoint and at most `queue` waiting for
them (more are refused at once); a per-read timeout ($PAPERATLAS_LLM_TIMEOUT) and a total deadline
per request ($PAPERATLAS_LLM_DEADLINE), after which, or when the caller cancels, the upstream
connection is closed so the model server stops too; a reply bounded by the task's token budget and
checked field by field (reply.py) before anyone sees it; the API key comes from the environment and is
never printed, logged or stored, and an endpoint is shown without credentials (`redact`); every error
names the endpoint and the fix.
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from .. import settings
from ..errors import PaperatlasError
from . import reply

URL_ENV = "PAPERATLAS_LLM_URL"
MODEL_ENV = "PAPERATLAS_LLM_MODEL"
KEY_ENV = "PAPERATLAS_LLM_API_KEY"
MAX_TOKENS_ENV = "PAPERATLAS_LLM_MAX_TOKENS"
# seconds the endpoint may stay silent while answering (a CPU model writes a long abstract in minutes)
TIMEOUT_ENV = "PAPERATLAS_LLM_TIMEOUT"
DEFAULT_TIMEOUT: float = settings.setting("llm_timeout").default
# seconds one request may take in all, waiting for a free slot included: a reply that trickles a byte
# now and then never trips the per-read timeout, but it ends here
DEADLINE_ENV = "PAPERATLAS_LLM_DEADLINE"
DEFAULT_DEADLINE: float = settings.setting("llm_deadline").default
MODELS_BYTES = 1024 * 1024  # the most of /models read (a list of names)
# set by a caller (a web request, a stream) to an Event that is set when nobody waits for the answer
# any more: the request in flight is closed, and one waiting for a slot gives up
CANCEL: ContextVar[threading.Event | None] = ContextVar("paperatlas_llm_cancel", default=None)
RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}


class LlmError(PaperatlasError):
    """The endpoint could not answer; the message names it, the fix says what to do."""

    def __init__(self, message: str, fix: str = "", endpoint: str = "") -> None:
        super().__init__(message, fix)
        self.endpoint = endpoint


class NoEndpoint(LlmError):
    """No endpoint is configured, so nothing can be generated (and nothing was sent)."""


class LlmBusy(LlmError):
    """Too many requests already wait for this endpoint: refused at once (nothing was sent)."""


class LlmCancelled(LlmError):
    """The caller left: the request was closed before its answer came."""


def redact(url: str) -> str:
    """`url` as it may be shown: without user, password, query or fragment (where keys hide)."""
    try:
        p = urlsplit(url)
        host = p.hostname or ""
        port = p.port
    except ValueError:
        return "(an unreadable URL)"
    if ":" in host:
        host = f"[{host}]"
    netloc = host + (f":{port}" if port else "")
    return urlunsplit((p.scheme, netloc, p.path, "", ""))


def no_endpoint() -> NoEndpoint:
    return NoEndpoint(
        "no language-model endpoint is configured, so nothing was generated (and nothing was sent anywhere)",
        f"pass --llm-url http://127.0.0.1:8080/v1 (or set ${URL_ENV}) to any OpenAI-compatible server: "
        "llama.cpp's server, ollama, vLLM, LM Studio, or a hosted API with its key in $" + KEY_ENV,
    )


@dataclass(frozen=True)
class LlmConfig:
    """Where generated text comes from. `model` "" = the first model the endpoint lists."""

    url: str
    model: str = ""
    connect_timeout: float = 3.0
    read_timeout: float = DEFAULT_TIMEOUT  # a CPU model writes a long abstract in minutes, not seconds
    deadline: float = DEFAULT_DEADLINE
    retries: int = 2
    backoff: float = 0.5
    concurrency: int = 2
    queue: int = 8  # requests that may wait for a free slot; one more is refused at once
    max_tokens: int = 0  # 0: each task's own budget; set to cap every request (tests, slow machines)

    @classmethod
    def from_env(cls, url: str | None = None, model: str | None = None) -> LlmConfig | None:
        """The configured endpoint (`url` first, then $PAPERATLAS_LLM_URL); None when there is none."""
        url = (url or settings.get("llm_url")).strip()
        if not url:
            return None
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise LlmError(
                f"bad language-model endpoint {redact(url)!r}",
                "give an http(s) URL such as http://127.0.0.1:8080/v1",
                redact(url),
            )
        mt = settings.get("llm_max_tokens")
        return cls(
            url=url.rstrip("/"),
            model=(model or settings.get("llm_model")).strip(),
            read_timeout=settings.get("llm_timeout"),
            deadline=settings.get("llm_deadline"),
            max_tokens=mt,
        )


@dataclass
class Completion:
    text: str
    model: str
    finish_reason: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0


class _Slots:
    """At most `n` requests in flight to one endpoint and `queue` waiting; the rest refused at once."""

    def __init__(self, n: int, queue: int) -> None:
        self.sem = threading.BoundedSemaphore(max(1, n))
        self.queue = max(0, queue)
        self.waiting = 0
        self.lock = threading.Lock()

    def take(self, until: float, cancel: threading.Event | None) -> str:
        """ "" once a slot is held; else why not ("busy", "deadline", "cancelled")."""
        if self.sem.acquire(blocking=False):
            return ""
        with self.lock:
            if self.waiting >= self.queue:
                return "busy"
            self.waiting += 1
        try:
            while True:
                left = until - time.monotonic()
                if left <= 0:
                    return "deadline"
                if cancel is not None and cancel.is_set():
                    return "cancelled"
                if self.sem.acquire(timeout=min(left, 0.2)):
                    return ""
        finally:
            with self.lock:
                self.waiting -= 1


_SLOTS: dict[str, _Slots] = {}
_SEM_LOCK = threading.Lock()


def _slots(url: str, n: int, queue: int) -> _Slots:
    """One limit per endpoint for the whole process (the web server and a batch share it)."""
    with _SEM_LOCK:
        slots = _SLOTS.get(url)
        if slots is None:
            slots = _SLOTS[url] = _Slots(n, queue)
        return slots


class _Watch:
    """Closes the connection of a request when its deadline passes or its caller cancels, so a
    blocked read returns at once and the model server sees the client leave (and stops writing)."""

    def __init__(self, until: float, cancel: threading.Event | None) -> None:
        self.until, self.cancel = until, cancel
        self.reason = ""
        self._conn: http.client.HTTPConnection | None = None
        self._done = threading.Event()
        self._lock = threading.Lock()
        threading.Thread(target=self._run, name="llm-watch", daemon=True).start()

    def attach(self, conn: http.client.HTTPConnection | None) -> None:
        with self._lock:
            self._conn = conn
            if self.reason and conn is not None:
                _shut(conn)

    def expired(self) -> str:
        if self.cancel is not None and self.cancel.is_set():
            return "cancelled"
        return "deadline" if time.monotonic() >= self.until else ""

    def _run(self) -> None:
        while not self._done.wait(0.1):
            why = self.expired()
            if why:
                with self._lock:
                    self.reason = why
                    if self._conn is not None:
                        _shut(self._conn)
                return

    def close(self) -> None:
        self._done.set()


def _shut(conn: http.client.HTTPConnection) -> None:
    sock = conn.sock
    if sock is not None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


class LlmClient:
    """Chat completions from one endpoint.

    Example:
        >>> c = LlmClient(LlmConfig("http://127.0.0.1:8080/v1"))  # doctest: +SKIP
        >>> c.chat([{"role": "user", "content": "Say hi"}], max_tokens=8).text  # doctest: +SKIP
    """

    def __init__(self, config: LlmConfig) -> None:
        self.config = config
        self._model = config.model
        self._lock = threading.Lock()
        self.requests = 0  # requests sent by this client (stats, tests)
        p = urlsplit(config.url)
        self._https = p.scheme == "https"
        self._host = p.hostname or ""
        self._port = p.port or (443 if self._https else 80)
        self._base = p.path.rstrip("/")

    @property
    def endpoint(self) -> str:
        """The endpoint as shown in messages: without credentials (a key travels in a header only)."""
        return redact(self.config.url)

    def _headers(self) -> dict[str, str]:
        h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        key = settings.get("llm_api_key")
        if key:
            h["Authorization"] = f"Bearer {key}"
        return h

    def _conn(self) -> http.client.HTTPConnection:
        cls = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
        return cls(self._host, self._port, timeout=self.config.connect_timeout)

    def _fail(self, what: str, fix: str = "", cls: type[LlmError] = LlmError) -> LlmError:
        return cls(
            f"language-model endpoint {self.endpoint}: {what}",
            fix or f"check that the server runs and --llm-url / ${URL_ENV} points at it",
            self.endpoint,
        )

    def _silent(self) -> LlmError:
        """The error of an endpoint silent for longer than the per-read timeout (its request is closed)."""
        return self._fail(
            f"no answer within {self.config.read_timeout:.0f} s (the request was closed)",
            f"the model may be too slow for this machine: try a smaller model, or raise ${TIMEOUT_ENV} (seconds)",
        )

    def _stopped(self, why: str) -> LlmError:
        """The error of a request closed by its watch: the deadline passed, or the caller left."""
        if why == "cancelled":
            return self._fail("the request was cancelled (nobody waits for the answer any more)", cls=LlmCancelled)
        return self._fail(
            f"no complete answer within the deadline of {self.config.deadline:.0f} s (the request was closed)",
            f"raise ${DEADLINE_ENV} (seconds), or use a faster or smaller model",
        )

    def _open(
        self, method: str, path: str, body: dict[str, Any] | None, watch: _Watch | None = None
    ) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
        """Send one request, retrying what may pass on a second try; the response is unread."""
        data = json.dumps(body, ensure_ascii=False).encode("utf-8") if body is not None else None
        last = ""
        for attempt in range(self.config.retries + 1):
            if attempt:
                time.sleep(self.config.backoff * 2 ** (attempt - 1))
            if watch is not None and watch.expired():
                raise self._stopped(watch.expired())
            conn = self._conn()
            try:
                conn.connect()
            except ConnectionRefusedError:
                conn.close()
                last = "connection refused (nothing listens there)"
                continue
            except OSError as e:  # includes a connect timeout: a host that does not answer at all
                conn.close()
                last = f"cannot connect within {self.config.connect_timeout:.0f} s ({type(e).__name__})"
                continue
            if watch is not None:
                watch.attach(conn)
            try:
                assert conn.sock is not None
                conn.sock.settimeout(self.config.read_timeout)
                conn.request(method, self._base + path, body=data, headers=self._headers())
                with self._lock:
                    self.requests += 1
                resp = conn.getresponse()
            except TimeoutError:
                conn.close()
                # a read timeout after the request went out would repeat a long generation: stop
                raise self._silent() from None
            except (ConnectionError, http.client.HTTPException, OSError) as e:
                conn.close()
                if watch is not None and watch.reason:
                    raise self._stopped(watch.reason) from None
                last = f"{type(e).__name__}: {e}"
                continue
            if resp.status in RETRY_STATUS and attempt < self.config.retries:
                retry_after = resp.getheader("Retry-After", "")
                resp.read(ENVELOPE_LIMIT)
                conn.close()
                last = f"HTTP {resp.status}"
                if retry_after.isdigit() and len(retry_after) < 4:
                    time.sleep(min(float(retry_after), 30.0))
                continue
            if resp.status >= 400:
                text = resp.read(2000).decode("utf-8", "replace")
                conn.close()
                fix = (
                    ("check the API key in $" + KEY_ENV)
                    if resp.status in (401, 403)
                    else (f"check the model name (--llm-model / ${MODEL_ENV})" if resp.status == 404 else "")
                )
                raise self._fail(f"HTTP {resp.status}: {_error_text(text)}", fix)
            return conn, resp
        raise self._fail(f"unreachable after {self.config.retries + 1} tries ({last})")

    def _read(self, resp: http.client.HTTPResponse, cap: int, watch: _Watch | None) -> bytes:
        """The body, at most `cap` bytes (a longer one is refused, not cut: its JSON would not parse)."""
        try:
            raw = resp.read(cap + 1)
        except TimeoutError:
            raise self._silent() from None
        except (OSError, http.client.HTTPException) as e:
            if watch is not None and watch.reason:
                raise self._stopped(watch.reason) from None
            raise self._fail(f"the answer was cut off ({type(e).__name__})") from None
        if watch is not None and watch.reason:
            raise self._stopped(watch.reason)
        if len(raw) > cap:
            raise self._fail(f"the answer is larger than {cap:,} bytes (not kept)", BAD_REPLY_FIX)
        return raw

    def _json(self, method: str, path: str, body: dict[str, Any] | None = None, cap: int = MODELS_BYTES) -> Any:
        conn, resp = self._open(method, path, body)
        try:
            raw = self._read(resp, cap, None)
        finally:
            conn.close()
        try:
            return json.loads(raw)
        except ValueError:
            raise self._fail(
                f"the answer is not JSON: {reply.clean_text(repr(raw[:200]))}",
                "point --llm-url at the API base of an OpenAI-compatible server (it ends in /v1)",
            ) from None

    # -- the API ---------------------------------------------------------------------------
    def model(self) -> str:
        """The model requests name: the configured one, else the first the endpoint lists (asked once)."""
        if not self._model:
            data = self._json("GET", "/models")
            items = data.get("data") if isinstance(data, dict) else None
            first = items[0] if isinstance(items, list) and items else None
            name = first.get("id") if isinstance(first, dict) else None
            if not isinstance(name, str) or not name.strip() or len(name) > 1000:
                raise self._fail("it lists no model", f"name one with --llm-model (or ${MODEL_ENV})")
            self._model = reply.clean_text(name.strip())
        return self._model

    def chat(
        self,
        messages: Sequence[dict[str, str]],
        max_tokens: int = 256,
        temperature: float = 0.2,
        on_text: Callable[[str], None] | None = None,
    ) -> Completion:
        """One completion, within the deadline. With `on_text`, the answer is streamed and each piece
        passed on as it comes. The reply is checked (reply.py) before it is returned.

        Raises:
            LlmError: unreachable, refused, timed out, cancelled or malformed; the message names the endpoint.
            LlmBusy: too many requests already wait for this endpoint (nothing was sent).
        """
        if self.config.max_tokens:
            max_tokens = min(max_tokens, self.config.max_tokens)
        started = time.monotonic()
        until = started + self.config.deadline
        cancel = CANCEL.get()
        body: dict[str, Any] = {
            "model": self.model(),
            "messages": list(messages),
            "max_tokens": max_tokens,
            "temperature": temperature,
        }
        slots = _slots(self.config.url, self.config.concurrency, self.config.queue)
        why = slots.take(until, cancel)
        if why == "busy":
            raise self._fail(
                f"{self.config.concurrency} requests run and {slots.queue} wait already: refused (nothing was sent)",
                "try again in a minute",
                cls=LlmBusy,
            )
        if why:
            raise self._stopped(why)
        watch = _Watch(until, cancel)
        try:
            if on_text is None:
                conn, resp = self._open("POST", "/chat/completions", body, watch)
                try:
                    c = self._completion(self._read(resp, reply.byte_cap(max_tokens), watch), max_tokens)
                finally:
                    conn.close()
            else:
                body["stream"] = True
                c = self._stream(body, on_text, max_tokens, watch)
        finally:
            watch.close()
            slots.sem.release()
        c.seconds = time.monotonic() - started
        if not c.model:
            c.model = body["model"]
        return c

    def _completion(self, raw: bytes, max_tokens: int) -> Completion:
        try:
            data = json.loads(raw)
        except ValueError:
            raise self._fail(f"the answer is not JSON: {reply.clean_text(repr(raw[:200]))}", BAD_REPLY_FIX) from None
        try:
            return Completion(*reply.completion(data, max_tokens))
        except reply.BadReply as e:
            raise self._fail(f"the answer is not a usable chat completion: {e}", BAD_REPLY_FIX) from None

    def _stream(
        self, body: dict[str, Any], on_text: Callable[[str], None], max_tokens: int, watch: _Watch
    ) -> Completion:
        conn, resp = self._open("POST", "/chat/completions", body, watch)
        parts: list[str] = []
        size = 0
        chars = reply.char_cap(max_tokens)
        model, finish = "", ""
        try:
            ctype = resp.getheader("Content-Type", "")
            if "event-stream" not in ctype:  # a server that ignores "stream": one JSON answer
                c = self._completion(self._read(resp, reply.byte_cap(max_tokens), watch), max_tokens)
                on_text(c.text)
                return c
            for event in _sse_events(resp, reply.byte_cap(max_tokens)):
                if event == "[DONE]":
                    break
                try:
                    piece, m, f = reply.chunk(json.loads(event))
                except ValueError as e:  # not JSON, or a BadReply
                    what = str(e) if isinstance(e, reply.BadReply) else f"a streamed piece is not JSON: {event[:120]!r}"
                    raise self._fail(reply.clean_text(what), BAD_REPLY_FIX) from None
                model, finish = m or model, f or finish
                if piece:
                    size += len(piece)
                    if size > chars:
                        raise self._fail(
                            f"the model wrote more than {chars:,} characters where {max_tokens} tokens were asked "
                            "for (the stream was closed, nothing kept)",
                            BAD_REPLY_FIX,
                        )
                    parts.append(piece)
                    on_text(piece)
        except _TooLong as e:
            raise self._fail(
                f"the stream sent more than {e.args[0]:,} bytes (closed, nothing kept)", BAD_REPLY_FIX
            ) from None
        except TimeoutError:
            raise self._silent() from None
        except (OSError, http.client.HTTPException) as e:
            if watch.reason:
                raise self._stopped(watch.reason) from None
            raise self._fail(f"the stream was cut off ({type(e).__name__})") from None
        finally:
            conn.close()
        if watch.reason:  # closed under a reader that took the shut socket for the stream's end
            raise self._stopped(watch.reason)
        return Completion("".join(parts), model, finish)


ENVELOPE_LIMIT = 64 * 1024
BAD_REPLY_FIX = "the server is not a well-behaved OpenAI-compatible endpoint: check --llm-url / $" + URL_ENV


class _TooLong(Exception):
    """A stream longer than its byte cap."""


def _sse_events(resp: http.client.HTTPResponse, cap: int) -> Iterator[str]:
    """The `data:` payloads of a server-sent event stream, at most `cap` bytes of it."""
    buf: list[str] = []
    seen = 0
    while True:
        line = resp.readline(65_536)
        if not line:
            break
        seen += len(line)
        if seen > cap:
            raise _TooLong(cap)
        s = line.decode("utf-8", "replace").rstrip("\r\n")
        if not s:
            if buf:
                yield "\n".join(buf)
                buf = []
            continue
        if s.startswith("data:"):
            buf.append(s[5:].lstrip())
    if buf:
        yield "\n".join(buf)


def _error_text(text: str) -> str:
    try:
        d = json.loads(text)
        err = d.get("error", d) if isinstance(d, dict) else d
        msg = err.get("message") if isinstance(err, dict) else err
        return reply.clean_text(str(msg or text))[:300]
    except ValueError:
        return reply.clean_text(" ".join(text.split()))[:300]
