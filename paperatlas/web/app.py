"""create_app(library) -> the ASGI app: route table, guard middleware, error pages, OpenAPI.

Route modules (`ROUTE_MODULES`, or `modules=` / `extra_routes=` of create_app) expose
`ENDPOINTS: list[Endpoint]` and optionally `NAV: list[(label, path)]`; see common.py.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import inspect
import re
import threading
from collections.abc import Sequence
from dataclasses import replace
from http.cookies import SimpleCookie
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import quote, unquote, urlsplit

from jinja2 import ChoiceLoader, Environment, FileSystemLoader
from markupsafe import Markup, escape
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Match, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .. import __version__
from ..errors import NotFound, PaperatlasError, StoreUnavailable
from ..hosts import foreign_origin
from .. import i18n
from ..i18n import gettext
from ..library import Library
from ..programme.models import event_text
from ..safety import safe_url
from ..search.query import parse
from ..search.snippets import highlight
from . import auth
from .common import (
    CSRF_COOKIE,
    Endpoint,
    HTTPError,
    Web,
    error_response,
    filter_params,
    author_url,
    new_csrf_token,
    paper_url,
    plain_reason,
    reader_name_pattern,
    wants_json,
)

HERE = Path(__file__).resolve().parent
TEMPLATES = HERE / "templates"
STATIC = HERE / "static"

# Route modules registered by every app; another module adds itself here (or passes modules=).
ROUTE_MODULES: list[str] = [
    "paperatlas.web.views",
    "paperatlas.web.personal",
    "paperatlas.web.map_views",
    "paperatlas.web.llm_views",
    "paperatlas.web.programme_views",
    "paperatlas.web.report_views",
    "paperatlas.web.fulltext_views",
]

MAX_BODY = 64 * 1024  # bytes of a POST body: forms and small JSON, never uploads
MAX_URL = 4096  # characters of path + query string (percent-decoded)
MAX_URL_BYTES_PER_CHAR = 12  # an astral character percent-encoded: %F0%9F%98%80
MAX_HEADERS = 32 * 1024  # bytes of all request headers together (browsers send a few KB)
SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
SECURITY_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
]


def _carries_secrets(request: Request, headers: list[tuple[bytes, bytes]]) -> bool:
    """Whether a response must not be kept by a browser's or a proxy's cache: it sets a cookie, it is a page
    (every page holds the CSRF token; /saved and a new reader's page hold the reader's API token), or it
    answers a request that names a reader (a bearer token or a session: what it shows is theirs)."""
    for k, v in headers:
        if k.lower() == b"set-cookie" or (k.lower() == b"content-type" and v.startswith(b"text/html")):
            return True
    return "authorization" in request.headers or auth.SESSION_COOKIE in request.cookies


def set_cookie(
    name: str, value: str, max_age: int | None = None, httponly: bool = False, samesite: str = "Lax"
) -> tuple[bytes, bytes]:
    """A raw Set-Cookie header (path /) for middleware, which has no Response to call set_cookie on."""
    c: SimpleCookie = SimpleCookie()
    c[name] = value
    c[name]["path"] = "/"
    c[name]["samesite"] = samesite
    if max_age is not None:
        c[name]["max-age"] = max_age
    if httponly:
        c[name]["httponly"] = True
    return b"set-cookie", c.output(header="").strip().encode("latin-1")


class _BodyTooLarge(Exception):
    pass


class Guard:
    """Applied before any view runs: size limits (413/414/431), the Host allow-list (400: DNS
    rebinding), read-only mode and cross-site writes (403), the CSRF cookie, security headers,
    and whether the local owner may be signed in without a session (see auth.py)."""

    def __init__(
        self,
        app: ASGIApp,
        read_only: bool = False,
        max_body: int = MAX_BODY,
        max_url: int = MAX_URL,
        allowed_hosts: Sequence[str] = (),
        owner_signin: bool = False,
        routes: Sequence[BaseRoute] = (),
    ):
        self.app = app
        self.read_only = read_only
        self.routes = list(routes)
        self.max_body = max_body
        self.max_url = max_url
        self.hosts = auth.HostCheck(allowed_hosts)
        self.owner_signin = owner_signin

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        scope["pa.owner_signin"] = self.owner_signin
        if sum(len(k) + len(v) for k, v in scope.get("headers", [])) > MAX_HEADERS:
            await self._fail(
                scope,
                receive,
                send,
                431,
                f"the request headers are larger than {MAX_HEADERS} bytes",
                "send fewer or smaller cookies and headers",
            )
            return
        host = request.headers.get("host")
        if not self.hosts.allows(host):
            await self._fail(
                scope,
                receive,
                send,
                400,
                f"this server does not answer to the host name {host!r}",
                "open it by an address it serves (127.0.0.1 or localhost), or restart `paperatlas "
                "serve` with --allowed-host NAME for the name you use",
            )
            return
        raw_path = scope.get("raw_path") or scope["path"].encode()
        raw_query = scope.get("query_string", b"")
        # the limit counts characters as written (a Chinese query's character is 9 bytes encoded),
        # so every value the API document allows fits; the bytes are bounded too
        if (
            len(raw_path) + len(raw_query) > self.max_url * MAX_URL_BYTES_PER_CHAR
            or len(unquote(raw_path.decode("latin-1"))) + len(unquote(raw_query.decode("latin-1"), errors="replace"))
            > self.max_url
        ):
            await self._fail(
                scope,
                receive,
                send,
                414,
                f"the URL is longer than {self.max_url} characters",
                "shorten the query, or POST it",
            )
            return
        length = request.headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > self.max_body):
            await self._fail(
                scope, receive, send, 413, f"the request body is larger than {self.max_body} bytes", "send less at once"
            )
            return
        if self.read_only and scope["method"] not in SAFE_METHODS and self._routed(scope):
            await self._fail(
                scope,
                receive,
                send,
                403,
                "this server is read-only",
                "restart `paperatlas serve` without --read-only to change anything",
            )
            return
        if scope["method"] not in SAFE_METHODS and _cross_site(request):
            await self._fail(
                scope,
                receive,
                send,
                403,
                "a write from another site is refused",
                "make changes from this site's own pages; scripts send no Origin header",
            )
            return

        cookie = request.cookies.get(CSRF_COOKIE, "")
        fresh = not (16 <= len(cookie) <= 64)
        scope["pa.csrf"] = new_csrf_token() if fresh else cookie
        started = False
        seen = 0

        async def limited_receive() -> Message:
            nonlocal seen
            msg = await receive()
            if msg["type"] == "http.request":
                seen += len(msg.get("body", b""))
                if seen > self.max_body:
                    raise _BodyTooLarge()
            return msg

        async def send_with_headers(msg: Message) -> None:
            nonlocal started
            if msg["type"] == "http.response.start":
                started = True
                headers = list(msg.get("headers", []))
                # a view may set its own policy (the map page needs 'unsafe-eval' for WebGL code)
                have = {k.lower() for k, _ in headers}
                headers += [h for h in SECURITY_HEADERS if h[0] not in have]
                if fresh:
                    headers.append(set_cookie(CSRF_COOKIE, scope["pa.csrf"], httponly=True, samesite="Strict"))
                if b"cache-control" not in have and _carries_secrets(request, headers):
                    headers.append((b"cache-control", b"no-store"))
                msg = {**msg, "headers": headers}
            await send(msg)

        try:
            await self.app(scope, limited_receive, send_with_headers)
        except _BodyTooLarge:
            if not started:
                await self._fail(
                    scope,
                    receive,
                    send,
                    413,
                    f"the request body is larger than {self.max_body} bytes",
                    "send less at once",
                )

    def _routed(self, scope: Scope) -> bool:
        """Whether a view takes this method at this path. One that none takes changes nothing, so
        the router answers it (404, or 405 naming the methods it allows) as on any server; the
        read-only refusal is for the writes a view would make."""
        if not self.routes:
            return True
        return any(route.matches(scope)[0] == Match.FULL for route in self.routes)

    async def _fail(self, scope: Scope, receive: Receive, send: Send, status: int, message: str, fix: str) -> None:
        scope.setdefault("pa.csrf", "")
        resp = error_response(Request(scope), status, message, fix)
        resp.headers.update({k.decode(): v.decode() for k, v in SECURITY_HEADERS})
        await resp(scope, receive, send)


class Language:
    """The UI language of each request: `?lang=zh|en` (then remembered in the `pa_lang` cookie),
    else that cookie, else Accept-Language (pages only: the JSON API stays English unless asked).

    It is set as the current language (i18n.current()) for the view, its templates and anything
    they call, and sent back as Content-Language."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        asked = i18n.normalize(request.query_params.get("lang"))
        lang = asked or i18n.normalize(request.cookies.get(i18n.COOKIE))
        if lang is None:
            # a script's JSON stays English; a browser (it sends Sec-Fetch-*) gets its own language
            script = wants_json(request) and "sec-fetch-site" not in request.headers
            lang = i18n.DEFAULT if script else (i18n.negotiate(request.headers.get("accept-language")) or i18n.DEFAULT)
        scope["pa.lang"] = lang

        async def send_with_language(msg: Message) -> None:
            if msg["type"] == "http.response.start":
                headers = [*msg.get("headers", []), (b"content-language", i18n.html_lang(lang).encode())]
                if asked and asked != request.cookies.get(i18n.COOKIE):
                    headers.append(set_cookie(i18n.COOKIE, asked, max_age=365 * 24 * 3600, samesite="Lax"))
                msg = {**msg, "headers": headers}
            await send(msg)

        # whatever this request reaches that would ask the language model asks spend_guard first
        from ..llm.capability import SPEND
        from .llm_views import spend_guard

        spend = SPEND.set(spend_guard(request))
        try:
            with i18n.language(lang):
                await self.app(scope, receive, send_with_language)
        finally:
            SPEND.reset(spend)


def _cross_site(request: Request) -> bool:
    """A browser write sent by another site's page (defence in depth beside the CSRF token)."""
    site = request.headers.get("sec-fetch-site")
    if site is not None and site.lower() not in ("same-origin", "none"):
        return True
    return foreign_origin(request.headers.get("origin"), request.headers.get("host"))


# -- errors -------------------------------------------------------------------------------
async def _http_error(request: Request, exc: Exception) -> Response:
    if isinstance(exc, HTTPError):
        resp = error_response(request, exc.status, exc.message, exc.fix)
        resp.headers.update(exc.headers)
        return resp
    if isinstance(exc, NotFound):
        return error_response(request, 404, exc.message, exc.fix)
    if isinstance(exc, StoreUnavailable):  # the database went away: try again, nothing is wrong with the request
        resp = error_response(request, 503, exc.message, exc.fix)
        resp.headers["Retry-After"] = "5"
        return resp
    if isinstance(exc, PaperatlasError):
        return error_response(request, 400, exc.message, exc.fix)
    if isinstance(exc, HTTPException):
        msg = {404: gettext("no such page"), 405: gettext("method not allowed")}.get(exc.status_code, str(exc.detail))
        resp = error_response(request, exc.status_code, msg, gettext("see /docs for the pages and the API"))
        if exc.headers:
            resp.headers.update(exc.headers)
        return resp
    return error_response(request, 500, gettext("internal error"), gettext("see the server log"))


# -- templates ------------------------------------------------------------------------------
def _hl(text: str, q: str = "") -> Markup:
    """Escaped text with the query's words marked (escaped even when there is no query)."""
    terms = parse(q).terms if q else []
    return Markup(highlight(text or "", terms, whole=True))


def _filesize(n: int | None) -> str:
    n = int(n or 0)
    for unit in ("bytes", "KiB", "MiB"):
        if n < 1024 or unit == "MiB":
            return f"{n:,} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return ""


def _t(message: str, **params: Any) -> Markup:
    """Templates' `_`: the translation, escaped, with `{name}` filled (Markup params stay markup)."""
    text = Markup.escape(i18n.translate(message))
    return text.format(**params) if params else text


def _nt(singular: str, plural: str, count: int, **params: Any) -> Markup:
    """Templates' `ngettext`: like `_`, the form for `count`; `{n}` is `count` unless given (e.g. n=x|thousands)."""
    params.setdefault("n", count)
    return Markup.escape(i18n.translate_plural(singular, plural, count)).format(**params)


def make_env(extra_dirs: Sequence[str | Path] = ()) -> Environment:
    loaders = [FileSystemLoader(str(d)) for d in extra_dirs] + [FileSystemLoader(str(TEMPLATES))]
    # autoescape for every template, whatever its name: paper fields are untrusted text
    env = Environment(loader=ChoiceLoader(loaders), autoescape=True, trim_blocks=True, lstrip_blocks=True)
    env.filters["paper_url"] = paper_url
    env.filters["author_url"] = author_url
    env.filters["plain_reason"] = plain_reason
    env.filters["hl"] = _hl
    env.filters["urlq"] = lambda s: quote(str(s), safe="")
    env.filters["safe_url"] = safe_url  # only http(s) URLs become links
    env.filters["thousands"] = lambda n: f"{int(n):,}" if n is not None else ""
    env.filters["filesize"] = _filesize
    # a translated hint names commands in `backticks`: escape it, then show those as code
    env.filters["code"] = _backticks_as_code
    # an event in one line, its type in the request's language (programme.models.event_text)
    env.filters["event_text"] = lambda e: event_text(e, i18n.translate)
    env.globals["version"] = __version__
    # the language is the request's (i18n.current(), set by the Language middleware)
    env.globals["_"] = env.globals["gettext"] = _t
    env.globals["ngettext"] = _nt
    return env


def _backticks_as_code(text: str) -> Markup:
    return Markup(re.sub(r"`([^`]+)`", r"<code>\1</code>", str(escape(text))))


def _asset_version() -> str:
    h = hashlib.sha1()
    for f in sorted(STATIC.rglob("*")):
        if f.is_file():
            h.update(f.read_bytes())
    return h.hexdigest()[:10]


def _load(module: str | ModuleType) -> ModuleType:
    return importlib.import_module(module) if isinstance(module, str) else module


def _run_inline(view: Any) -> Any:
    """A sync view called on the event loop itself, not in a worker thread."""
    if inspect.iscoroutinefunction(view):
        return view

    @functools.wraps(view)
    async def inline(request: Request) -> Any:
        return view(request)

    return inline


def _bound(e: Endpoint, inline: bool) -> Any:
    """The endpoint's view, told which endpoint it serves (a JSON body is read by its Params)."""
    view = e.view
    if inspect.iscoroutinefunction(view):

        @functools.wraps(view)
        async def bound(request: Request) -> Any:
            request.scope["pa.endpoint"] = e
            return await view(request)

        return bound

    @functools.wraps(view)
    def bound_sync(request: Request) -> Any:
        request.scope["pa.endpoint"] = e
        return view(request)

    return _run_inline(bound_sync) if inline else bound_sync


def build_routes(endpoints: Sequence[Endpoint], inline: bool = False) -> list[BaseRoute]:
    """One route per path: endpoints that share a path (GET /triage, POST /triage) become one route
    that dispatches on the method, so a 405 or OPTIONS answer's Allow header names them all."""
    by_path: dict[str, list[Endpoint]] = {}
    for e in endpoints:
        # the .json twin first: `/paper/{id:path}` would otherwise take "x.json" as an id
        for path in ([e.path + ".json"] if e.json_twin else []) + [e.path]:
            by_path.setdefault(path, []).append(e)
    routes: list[BaseRoute] = []
    for path, es in by_path.items():
        if len(es) == 1:
            routes.append(Route(path, _bound(es[0], inline), methods=list(es[0].methods)))
            continue
        table = {m: _bound(e, inline) for e in es for m in e.methods}
        if "GET" in table:
            table.setdefault("HEAD", table["GET"])

        async def dispatch(request: Request, table: dict[str, Any] = table) -> Any:
            view = table[request.method]
            if inspect.iscoroutinefunction(view):
                return await view(request)
            return await run_in_threadpool(view, request)

        routes.append(Route(path, dispatch, methods=sorted(table)))
    return routes


def create_app(
    library: Library,
    read_only: bool = False,
    modules: Sequence[str | ModuleType] = (),
    extra_routes: Sequence[Endpoint | tuple[Any, ...]] = (),
    template_dirs: Sequence[str | Path] = (),
    max_body: int = MAX_BODY,
    max_url: int = MAX_URL,
    inline: bool = False,
    allowed_hosts: Sequence[str] = (),
    owner_signin: bool = False,
    signups: bool | None = None,
) -> Starlette:
    """The web UI and HTTP API over `library`.

    Args:
        library: the Library every page reads (and stars/tags write to).
        read_only: refuse every write (POST, PUT, DELETE...) with 403.
        modules: extra route modules (objects or import paths) with ENDPOINTS and NAV.
        extra_routes: more endpoints: Endpoint objects or (path, view[, methods]) tuples.
        template_dirs: folders searched for templates before the built-in ones.
        max_body: largest request body in bytes (413 above).
        max_url: longest path + query string (414 above).
        inline: run sync views on the event loop instead of a thread pool; for one-process-
            per-core serving (`serve --workers N`), where thread hand-offs only cost CPU.
        allowed_hosts: Host names served besides loopback names and IP addresses ("*": any).
        owner_signin: sign in requests from this machine as the owner (always reader "me") without
            a session; for a server bound to loopback only (docs/security.md).
        signups: whether a visitor may create a reader by signing in with a new name (rate-limited
            per client address); default: only when `owner_signin` (a server bound to loopback).

    Example:
        >>> app = create_app(Library("demo.db"))  # doctest: +SKIP
        >>> # uvicorn.run(app, host="127.0.0.1", port=8000)
    """
    from . import openapi

    endpoints: list[Endpoint] = []
    nav: list[tuple[str, str]] = []
    for m in [*ROUTE_MODULES, *modules]:
        mod = _load(m)
        endpoints.extend(getattr(mod, "ENDPOINTS", []))
        nav.extend(getattr(mod, "NAV", []))
    for r in extra_routes:
        if isinstance(r, Endpoint):
            endpoints.append(r)
        else:
            path, view, *rest = r
            endpoints.append(Endpoint(path, view, methods=tuple(rest[0]) if rest else ("GET",)))
    endpoints.extend(openapi.ENDPOINTS)
    # the library's filters (its own and its capabilities'), documented where an endpoint takes them
    endpoints = [
        replace(e, params=[*e.params, *filter_params(library.filters, e.filters, e.skip_filters)]) if e.filters else e
        for e in endpoints
    ]
    # a pattern ending in a greedy `{x:path}` goes last: it would swallow "/paper/a/b/extra"
    endpoints.sort(key=lambda e: e.path.endswith(":path}"))
    routes = build_routes(endpoints, inline)
    routes.append(Mount("/static", app=StaticFiles(directory=str(STATIC)), name="static"))

    handlers: dict[Any, Any] = {HTTPException: _http_error, PaperatlasError: _http_error, Exception: _http_error}
    app = Starlette(
        routes=routes,
        middleware=[
            Middleware(Language),
            Middleware(
                Guard,
                read_only=read_only,
                max_body=max_body,
                max_url=max_url,
                allowed_hosts=allowed_hosts,
                owner_signin=owner_signin,
                routes=routes,
            ),
        ],
        exception_handlers=handlers,
    )
    if read_only:
        library.set_read_only()
    app.state.web = Web(
        library=library,
        env=make_env(template_dirs),
        read_only=read_only,
        nav=nav,
        endpoints=endpoints,
        asset_version=_asset_version(),
        signups=owner_signin if signups is None else signups,
    )
    return app


def warm(library: Library) -> None:
    """Build the search indexes and load the model now, so the first visitor does not wait."""
    try:
        library.engine.keyword_index()
        if library.engine.vector_index() is not None:
            library.search("warm up", limit=1)
    except PaperatlasError:
        pass
    # The recommendation features take seconds on a large library (15 s at 8k papers); build them
    # in the background so the server starts at once and the first "For you" visit is fast.
    threading.Thread(target=_warm_recommend, args=(library,), name="warm-recommend", daemon=True).start()
    # the API document's reader-name pattern walks every Unicode code point (~0.3-0.7 s of CPU)
    threading.Thread(target=reader_name_pattern, name="warm-openapi", daemon=True).start()


def _warm_recommend(library: Library) -> None:
    try:
        library.recommend.corpus()
    except Exception:  # noqa: BLE001 - warming is an optimisation; a real request reports errors
        pass


# -- one request without a server (`paperatlas serve --get PATH`) ---------------------------
def request_once(
    app: ASGIApp, path: str, method: str = "GET", headers: Sequence[tuple[str, str]] = (), body: bytes = b""
) -> tuple[int, list[tuple[str, str]], bytes]:
    """Run one HTTP request through the ASGI app in-process; (status, headers, body)."""
    import anyio

    url = urlsplit(path if path.startswith("/") else "/" + path)
    scope: dict[str, Any] = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method.upper(),
        "scheme": "http",
        "path": unquote(url.path),
        "raw_path": url.path.encode(),
        "query_string": url.query.encode(),
        "root_path": "",
        "headers": [(b"host", b"localhost")]
        + [(k.lower().encode(), v.encode()) for k, v in headers]
        + [(b"content-length", str(len(body)).encode())],
        "client": ("127.0.0.1", 0),
        "server": ("localhost", 80),
    }
    out: dict[str, Any] = {"status": 500, "headers": [], "body": b""}

    state: dict[str, Any] = {"asked": False}

    async def receive() -> Message:
        # the body once; then the client "disconnects" only when the response is complete. A streamed
        # response listens for that disconnect beside its stream: answering the request again at once
        # would spin that listener forever and the stream would never run
        if not state["asked"]:
            state["asked"] = True
            return {"type": "http.request", "body": body, "more_body": False}
        await state["complete"].wait()
        return {"type": "http.disconnect"}

    async def send(msg: Message) -> None:
        if msg["type"] == "http.response.start":
            out["status"] = msg["status"]
            out["headers"] = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in msg.get("headers", [])]
        elif msg["type"] == "http.response.body":
            out["body"] += msg.get("body", b"")
            if not msg.get("more_body", False):
                state["complete"].set()

    async def main() -> None:
        state["complete"] = anyio.Event()
        await app(scope, receive, send)

    anyio.run(main)
    return out["status"], out["headers"], out["body"]
