"""One client for any OpenAI-compatible chat endpoint (llama.cpp's server, ollama, vLLM, LM Studio,
DeepSeek, Qwen, Kimi, GLM, OpenAI...): `POST {base}/chat/completions`, optionally streamed.

Stdlib only (http.client), so the default install stays light. What it promises: nothing is sent
unless an endpoint is configured; a connect timeout of a few seconds, so an unreachable endpoint
fails fast; retries with exponential backoff on 429/5xx and dropped connections (honouring
Retry-After); at most `concurrency` requests in flight per endpoint; the API key comes from the
environment and is never printed, logged or stored; every error names the endpoint and the fix.
"""

from __future__ import annotations

import http.client
import json
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from .. import settings
from ..errors import PaperatlasError

URL_ENV = "PAPERATLAS_LLM_URL"
MODEL_ENV = "PAPERATLAS_LLM_MODEL"
KEY_ENV = "PAPERATLAS_LLM_API_KEY"
MAX_TOKENS_ENV = "PAPERATLAS_LLM_MAX_TOKENS"
RETRY_STATUS = {408, 409, 425, 429, 500, 502, 503, 504}


class LlmError(PaperatlasError):
    """The endpoint could not answer; the message names it, the fix says what to do."""

    def __init__(self, message: str, fix: str = "", endpoint: str = "") -> None:
        super().__init__(message, fix)
        self.endpoint = endpoint


class NoEndpoint(LlmError):
    """No endpoint is configured, so nothing can be generated (and nothing was sent)."""


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
    read_timeout: float = 300.0  # a CPU model writes a long abstract in minutes, not seconds
    retries: int = 2
    backoff: float = 0.5
    concurrency: int = 2
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
                f"bad language-model endpoint {url!r}", "give an http(s) URL such as http://127.0.0.1:8080/v1", url
            )
        mt = settings.get("llm_max_tokens")
        return cls(
            url=url.rstrip("/"),
            model=(model or settings.get("llm_model")).strip(),
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


_SEMAPHORES: dict[str, threading.BoundedSemaphore] = {}
_SEM_LOCK = threading.Lock()


def _semaphore(url: str, n: int) -> threading.BoundedSemaphore:
    """One limit per endpoint for the whole process (the web server and a batch share it)."""
    with _SEM_LOCK:
        sem = _SEMAPHORES.get(url)
        if sem is None:
            sem = _SEMAPHORES[url] = threading.BoundedSemaphore(max(1, n))
        return sem


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
        """The endpoint as shown in messages (never with a key: keys travel in a header only)."""
        return self.config.url

    def _headers(self) -> dict[str, str]:
        h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        key = settings.get("llm_api_key")
        if key:
            h["Authorization"] = f"Bearer {key}"
        return h

    def _conn(self) -> http.client.HTTPConnection:
        cls = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
        return cls(self._host, self._port, timeout=self.config.connect_timeout)

    def _fail(self, what: str, fix: str = "") -> LlmError:
        return LlmError(
            f"language-model endpoint {self.endpoint}: {what}",
            fix or f"check that the server runs and --llm-url / ${URL_ENV} points at it",
            self.endpoint,
        )

    def _open(
        self, method: str, path: str, body: dict[str, Any] | None
    ) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
        """Send one request, retrying what may pass on a second try; the response is unread."""
        data = json.dumps(body, ensure_ascii=False).encode("utf-8") if body is not None else None
        last = ""
        for attempt in range(self.config.retries + 1):
            if attempt:
                time.sleep(self.config.backoff * 2 ** (attempt - 1))
            conn = self._conn()
            try:
                conn.connect()
            except ConnectionRefusedError:
                conn.close()
                last = "connection refused (nothing listens there)"
                continue
            except OSError as e:  # includes a connect timeout: a host that does not answer at all
                conn.close()
                last = f"cannot connect within {self.config.connect_timeout:.0f} s ({e})"
                continue
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
                raise self._fail(
                    f"no answer within {self.config.read_timeout:.0f} s",
                    "the model may be too slow for this machine: try a smaller model, or raise the timeout",
                ) from None
            except (ConnectionError, http.client.HTTPException, OSError) as e:
                conn.close()
                last = f"{type(e).__name__}: {e}"
                continue
            if resp.status in RETRY_STATUS and attempt < self.config.retries:
                retry_after = resp.getheader("Retry-After", "")
                resp.read()
                conn.close()
                last = f"HTTP {resp.status}"
                if retry_after.isdigit():
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

    def _json(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        conn, resp = self._open(method, path, body)
        try:
            raw = resp.read()
        except (OSError, http.client.HTTPException) as e:
            raise self._fail(f"the answer was cut off ({e})") from None
        finally:
            conn.close()
        try:
            return json.loads(raw)
        except ValueError:
            raise self._fail(
                f"the answer is not JSON: {raw[:200]!r}",
                "point --llm-url at the API base of an OpenAI-compatible server (it ends in /v1)",
            ) from None

    # -- the API ---------------------------------------------------------------------------
    def model(self) -> str:
        """The model requests name: the configured one, else the first the endpoint lists (asked once)."""
        if not self._model:
            data = self._json("GET", "/models")
            items = data.get("data") if isinstance(data, dict) else None
            if not items or not isinstance(items[0], dict) or not items[0].get("id"):
                raise self._fail("it lists no model", f"name one with --llm-model (or ${MODEL_ENV})")
            self._model = str(items[0]["id"])
        return self._model

    def chat(
        self,
        messages: Sequence[dict[str, str]],
        max_tokens: int = 256,
        temperature: float = 0.2,
        on_text: Callable[[str], None] | None = None,
    ) -> Completion:
        """One completion. With `on_text`, the answer is streamed and each piece passed on as it comes.

        Raises:
            LlmError: unreachable, refused, timed out or malformed; the message names the endpoint.
        """
        if self.config.max_tokens:
            max_tokens = min(max_tokens, self.config.max_tokens)
        body: dict[str, Any] = {
            "model": self.model(),
            "messages": list(messages),
            "max_tokens": max_tokens,
            "temperature": temperature,
        }
        started = time.monotonic()
        with _semaphore(self.endpoint, self.config.concurrency):
            if on_text is None:
                data = self._json("POST", "/chat/completions", body)
                c = _parse_completion(data, self._fail)
            else:
                body["stream"] = True
                c = self._stream(body, on_text)
        c.seconds = time.monotonic() - started
        if not c.model:
            c.model = body["model"]
        return c

    def _stream(self, body: dict[str, Any], on_text: Callable[[str], None]) -> Completion:
        conn, resp = self._open("POST", "/chat/completions", body)
        parts: list[str] = []
        model, finish = "", ""
        try:
            ctype = resp.getheader("Content-Type", "")
            if "event-stream" not in ctype:  # a server that ignores "stream": one JSON answer
                c = _parse_completion(json.loads(resp.read()), self._fail)
                on_text(c.text)
                return c
            for event in _sse_events(resp):
                if event == "[DONE]":
                    break
                try:
                    chunk = json.loads(event)
                except ValueError:
                    raise self._fail(f"a streamed piece is not JSON: {event[:120]!r}") from None
                model = chunk.get("model") or model
                for ch in chunk.get("choices") or []:
                    piece = (ch.get("delta") or {}).get("content") or ""
                    if piece:
                        parts.append(piece)
                        on_text(piece)
                    finish = ch.get("finish_reason") or finish
        except (OSError, http.client.HTTPException) as e:
            raise self._fail(f"the stream was cut off ({e})") from None
        finally:
            conn.close()
        return Completion("".join(parts), model, finish)


def _sse_events(resp: http.client.HTTPResponse) -> Iterator[str]:
    """The `data:` payloads of a server-sent event stream."""
    buf: list[str] = []
    while True:
        line = resp.readline()
        if not line:
            break
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


def _parse_completion(data: Any, fail: Callable[..., LlmError]) -> Completion:
    try:
        choice = data["choices"][0]
        text = choice["message"].get("content") or ""
    except (KeyError, IndexError, TypeError, AttributeError):
        raise fail(
            f"the answer is not a chat completion: {str(data)[:200]}",
            "point --llm-url at an OpenAI-compatible API base (it ends in /v1)",
        ) from None
    usage = data.get("usage") or {}
    return Completion(
        str(text),
        str(data.get("model") or ""),
        str(choice.get("finish_reason") or ""),
        int(usage.get("prompt_tokens") or 0),
        int(usage.get("completion_tokens") or 0),
    )


def _error_text(text: str) -> str:
    try:
        d = json.loads(text)
        err = d.get("error", d) if isinstance(d, dict) else d
        msg = err.get("message") if isinstance(err, dict) else err
        return str(msg or text)[:300]
    except ValueError:
        return " ".join(text.split())[:300]
