"""What every web route module shares: endpoint specs (which also feed OpenAPI), parameter
parsing, the current reader, CSRF checks, and rendering HTML or JSON.

A route module (views.py, or a later recommendations module) exposes
`ENDPOINTS: list[Endpoint]` and optionally `NAV: list[tuple[str, str]]`; `create_app`
registers them. An endpoint is a plain `def view(request) -> Response`; it reaches the
library through `web(request).library`.
"""

from __future__ import annotations

import functools
import hmac
import json
import re
import secrets
import unicodedata
from datetime import date
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

from jinja2 import Environment
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from .. import i18n
from ..i18n import N_, gettext
from ..errors import PaperatlasError
from ..contrib import SWITCH_OFF, SWITCH_ON, Filter, FilterTable, switch
from ..library import Library, filter_table
from ..readers import Reader
from . import auth

CSRF_COOKIE = "pa_csrf"
CSRF_HEADER = "x-csrf-token"
CSRF_FIELD = "csrf"
LEGACY_READER_COOKIE = "pa_reader"  # named the reader before sign-in existed; now only cleared
DEFAULT_READER = "me"
# the longest value of one query parameter: several of them must fit in one URL (MAX_URL characters)
MAX_QUERY_VALUE = 3000
INT_LIMIT = 2**31 - 1  # larger integers are no year, page or count (SQLite would overflow at 2**63)


class HTTPError(PaperatlasError):
    """An error with an HTTP status; rendered as a JSON body on the API and a page in HTML."""

    def __init__(self, status: int, message: str, fix: str = "", headers: dict[str, str] | None = None) -> None:
        super().__init__(message, fix)
        self.status = status
        self.headers = headers or {}


@dataclass
class Param:
    """One query-string or form parameter: parsed, validated and documented in OpenAPI from here."""

    name: str
    type: type = str
    default: Any = None
    description: str = ""
    choices: Sequence[str] = ()
    required: bool = False
    minimum: int | None = None
    maximum: int | None = None
    max_length: int = 500
    where: str = "query"  # "query", "path" or "form"
    # a regular expression the value must match (re.search; anchor it with ^...$); a function
    # returning one documents a rule the view checks itself (reader names)
    pattern: str | Callable[[], str] = ""
    format: str = ""  # an OpenAPI format the value must have: "date" (YYYY-MM-DD)
    json_list: bool = False  # in a JSON body the value may also be a list of strings

    def parse(self, raw: str | None) -> Any:
        if raw is None or raw == "":
            if self.required:
                raise HTTPError(
                    400,
                    gettext("missing parameter {name!r}", name=self.name),
                    gettext("add {name}=... to the request", name=self.name),
                )
            return self.default
        if len(raw) > self.limit:
            raise HTTPError(
                400,
                gettext("parameter {name!r} is longer than {n} characters", name=self.name, n=self.limit),
                gettext("shorten it"),
            )
        if self.type is int:
            try:
                v: Any = int(raw)
            except ValueError:
                raise HTTPError(
                    400,
                    gettext("parameter {name!r} must be a whole number, not {raw!r}", name=self.name, raw=raw),
                    gettext("e.g. {example}", example=f"{self.name}={self.default or 1}"),
                ) from None
            if not -INT_LIMIT <= v <= INT_LIMIT:
                raise HTTPError(
                    400,
                    gettext("parameter {name!r} is out of range ({raw}...)", name=self.name, raw=raw[:20]),
                    gettext("use a number between {low} and {high}", low=-INT_LIMIT, high=INT_LIMIT),
                )
            low = self.minimum if self.minimum is not None else -INT_LIMIT
            high = self.maximum if self.maximum is not None else INT_LIMIT
            if not low <= v <= high:  # refused, not clamped: the answer must be what was asked for
                raise HTTPError(
                    400,
                    gettext(
                        "parameter {name!r} must be between {low} and {high}, not {raw}",
                        name=self.name,
                        low=low,
                        high=high,
                        raw=raw[:20],
                    ),
                    gettext("e.g. {example}", example=f"{self.name}={min(max(self.default or low, low), high)}"),
                )
            return v
        if self.type is bool:
            # exactly the spellings the document lists, so what it calls invalid is refused
            on = switch(raw)
            if on is not None:
                return on
            raise HTTPError(
                400,
                gettext("parameter {name!r} must be true or false, not {raw!r}", name=self.name, raw=raw),
                gettext("use {name}=1 or {name}=0", name=self.name),
            )
        if isinstance(self.pattern, str) and self.pattern and not re.search(self.pattern, raw):
            raise HTTPError(
                400,
                gettext(
                    "parameter {name!r} has characters or a form it may not have: {raw!r}", name=self.name, raw=raw[:60]
                ),
                self.description or gettext("see /docs for the parameter's form"),
            )
        if self.format == "date" and not _is_date(raw):
            raise HTTPError(
                400,
                gettext("parameter {name!r} must be a date like 2026-01-31, not {raw!r}", name=self.name, raw=raw[:40]),
                gettext("use {name}=YYYY-MM-DD", name=self.name),
            )
        if self.choices and raw not in self.choices:
            raise HTTPError(
                400,
                gettext(
                    "parameter {name!r} must be one of {choices}, not {raw!r}",
                    name=self.name,
                    choices=", ".join(self.choices),
                    raw=raw,
                ),
                gettext("e.g. {example}", example=f"{self.name}={self.choices[0]}"),
            )
        return raw

    @property
    def limit(self) -> int:
        """The longest value taken: a query parameter must also fit in the URL with the others."""
        return min(self.max_length, MAX_QUERY_VALUE) if self.where == "query" else self.max_length

    def schema(self, json_body: bool = False) -> dict[str, Any]:
        """The JSON schema of this parameter (`json_body`: as a field of a JSON request body)."""
        s: dict[str, Any] = {"type": {int: "integer", bool: "boolean"}.get(self.type, "string")}
        if self.pattern:
            s["pattern"] = self.pattern if isinstance(self.pattern, str) else self.pattern()
        if self.format:
            s["format"] = self.format
        if self.type is int:  # what parse() refuses with a 400, the document says too
            s["minimum"], s["maximum"] = -INT_LIMIT, INT_LIMIT
        if self.choices:
            s["enum"] = list(self.choices)
        if self.default is not None:
            s["default"] = self.default
        if self.minimum is not None:
            s["minimum"] = self.minimum
        if self.maximum is not None:
            s["maximum"] = self.maximum
        if self.type is str and self.where != "path":
            s["maxLength"] = self.limit
            if self.required:
                s["minLength"] = 1  # parse() refuses an empty required value
        if json_body and self.json_list:
            return {
                "anyOf": [
                    s,
                    {
                        "type": "array",
                        "items": {"type": "string", "minLength": 1},
                        "minItems": 1 if self.required else 0,
                        "maxItems": 1000,
                    },
                ]
            }
        if self.type is bool and not json_body:
            # a query string or a form spells a switch as a word: the words parse() takes, or blank
            return {"anyOf": [s, {"type": "string", "enum": ["", *SWITCH_ON, *SWITCH_OFF]}]}
        if (
            not json_body
            and not self.required
            and self.where != "path"
            and (self.type is not str or self.pattern or self.format)
        ):
            # a blank field (an empty filter box in a form: `year=`) means "not given"
            return {"anyOf": [s, {"type": "string", "maxLength": 0}]}
        return s

    def from_json(self, value: Any) -> str:
        """A JSON body's value as the text parse() reads; a 400 when its JSON type is not this
        parameter's (a form sends text for everything, a JSON body must send the right type)."""
        if self.type is bool and isinstance(value, bool):
            return "true" if value else "false"
        if self.type is int and not isinstance(value, bool):
            if isinstance(value, int):
                return str(value)
            if isinstance(value, float) and value.is_integer():  # JSON's 2026.0 is the integer 2026
                return str(int(value))
        if self.type is str:
            if isinstance(value, str):
                return value
            if self.json_list and isinstance(value, list) and all(isinstance(x, str) for x in value):
                return json.dumps(value, ensure_ascii=False)
        kind = {int: gettext("a whole number"), bool: gettext("true or false")}.get(
            self.type, gettext("a list of strings or a string") if self.json_list else gettext("a string")
        )
        raise HTTPError(
            400,
            gettext(
                "field {name!r} must be {kind}, not {value}",
                name=self.name,
                kind=kind,
                value=json.dumps(value, ensure_ascii=False)[:40],
            ),
            gettext(
                "e.g. {example}", example=json.dumps({self.name: self.default if self.default is not None else ""})
            ),
        )


def _ranges(pred: Callable[[str], bool], stop: int = 0x110000) -> list[tuple[int, int]]:
    """The code point ranges [a, b] (inclusive) below `stop` whose characters satisfy `pred`."""
    out: list[tuple[int, int]] = []
    start = -1
    for cp in range(stop):
        if pred(chr(cp)):
            if start < 0:
                start = cp
        elif start >= 0:
            out.append((start, cp - 1))
            start = -1
    if start >= 0:
        out.append((start, stop - 1))
    return out


def _class_of(ranges: list[tuple[int, int]]) -> str:
    """A regex character class body for these ranges (BMP code points as \\u escapes, astral
    ones as themselves, which both Python's re and JSON Schema's u-mode regexes read)."""

    def ch(cp: int) -> str:
        return f"\\u{cp:04x}" if cp <= 0xFFFF else chr(cp)

    return "".join(ch(a) if a == b else f"{ch(a)}-{ch(b)}" for a, b in ranges)


@functools.cache
def reader_name_pattern() -> str:
    """What Library.check_reader_name accepts, as a pattern for the API document: no control,
    invisible or surrogate character (in this Python's Unicode version), one character besides
    white space (names are stripped), and not both halves of a MIME encoded word (`=?`, `?=`)."""
    from ..readers.capability import BAD_NAME_CATEGORIES

    # lone surrogates (Cs) are refused too, but no UTF-8 text carries one and regex engines that
    # validate JSON Schema (Rust's, ECMA's u mode) refuse them in a character class
    category, cats = unicodedata.category, frozenset(BAD_NAME_CATEGORIES) - {"Cs"}
    bad = _class_of(_ranges(lambda c: category(c) in cats))
    bad_or_space = _class_of(_ranges(lambda c: category(c) in cats or c.isspace()))
    return rf"^(?!.*=\?.*\?=)(?!.*\?=.*=\?)(?!.*=\?=)[^{bad}]*[^{bad_or_space}][^{bad}]*$"


def _is_date(raw: str) -> bool:
    """YYYY-MM-DD and a real day (what OpenAPI's format "date" means; not 20260131 or 2026-W05)."""
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", raw):
        return False
    try:
        date.fromisoformat(raw)
    except ValueError:
        return False
    return True


@dataclass
class Endpoint:
    """A route plus what OpenAPI says about it.

    `json_twin`: the same view also answers at `path + ".json"` (registered first, so a
    `{x:path}` parameter does not swallow the suffix) and returns JSON there.
    """

    path: str
    view: Callable[[Request], Any]
    methods: Sequence[str] = ("GET",)
    summary: str = ""
    params: Sequence[Param] = ()
    json_twin: bool = False
    api_only: bool = False  # JSON only (no HTML page)
    writes: bool = False
    response: dict[str, Any] = field(default_factory=dict)  # OpenAPI schema of the JSON answer
    tags: Sequence[str] = ()
    media: Sequence[str] = ()  # the answer's content types, when not (only) JSON
    body_rules: dict[str, Any] = field(default_factory=dict)  # more of the body's schema (anyOf ...)
    statuses: Sequence[int] = ()  # error statuses this operation may answer besides the common ones
    api_required: Sequence[str] = ()  # query parameters the JSON answer needs (the page shows a form without)
    media_schemas: dict[str, Any] = field(default_factory=dict)  # the answer's schema per content type
    # where the library's filters (Library.filters: its own and the capabilities') join `params`:
    # "query" or "form" ("" none); create_app adds them, so a filter declared once is documented here
    filters: str = ""
    skip_filters: Sequence[str] = ()  # those of them this endpoint declares itself, in its own words


# -- the per-app context ---------------------------------------------------------------
@dataclass
class Web:
    """Everything a view needs, stored on `app.state.web`."""

    library: Library
    env: Environment
    read_only: bool = False
    nav: list[tuple[str, str]] = field(default_factory=list)
    endpoints: list[Endpoint] = field(default_factory=list)
    asset_version: str = ""
    cache: dict[str, Any] = field(default_factory=dict)
    # `serve` (one process, writable): the first Chinese query starts the multilingual index's build
    build_multilingual: bool = False
    # whether a visitor's new name on the sign-in form creates a reader (the local owner always may)
    signups: bool = True
    signup_limit: auth.SignupLimit = field(default_factory=auth.SignupLimit)


def web(request: Request) -> Web:
    return request.app.state.web  # type: ignore[no-any-return]


def lib(request: Request) -> Library:
    return web(request).library


def wants_json(request: Request) -> bool:
    """JSON for `.json` paths, `Accept: application/json`, or a script holding a bearer token."""
    if request.url.path.endswith(".json") or request.url.path.startswith("/api/"):
        return True
    if request.headers.get("authorization", "").lower().startswith("bearer "):
        return True
    accept = request.headers.get("accept", "")
    return accept.split(",")[0].strip().startswith("application/json")


def filter_param(f: Filter, where: str = "query") -> Param:
    """The web parameter of a filter (parsed, validated and documented as the filter declares). In a
    form an empty field is no filter (a form posts every field it has): its pattern says so."""
    form = where == "form" and bool(f.pattern)
    return Param(
        f.name,
        f.type,
        None,
        f.help,
        choices=f.choices,
        minimum=None if f.minimum is None else int(f.minimum),
        maximum=None if f.maximum is None else int(f.maximum),
        max_length=f.max_length,
        where=where,
        pattern=f"^$|{f.pattern}" if form else f.pattern,
        format="" if form else f.format,
    )


def filter_params(table: FilterTable, where: str = "query", skip: Sequence[str] = ()) -> list[Param]:
    """The parameters of every filter of `table` (but those named in `skip`)."""
    return [filter_param(f, where) for f in table if f.name not in skip]


def library_params(
    request: Request, params: Sequence[Param], where: str = "query", skip: Sequence[str] = ()
) -> list[Param]:
    """`params` and the library's filters: what a view that takes every filter parses."""
    w = web(request)
    key = f"params:{where}:{','.join(skip)}"
    found = w.cache.get(key)
    if found is None:
        found = w.cache[key] = filter_params(w.library.filters, where, skip)
    return [*params, *found]


# The filters and paging that list pages share (search, For you): one definition, one OpenAPI text.
FILTER_PARAMS = [filter_param(f) for f in filter_table() if f.column]
PAGING_PARAMS = [
    Param("page", int, 1, "page number, from 1", minimum=1, maximum=1000),
    Param("per_page", int, 20, "results per page", minimum=1, maximum=100),
]


def query(request: Request, params: Sequence[Param]) -> dict[str, Any]:
    """Parse and validate the query parameters named in `params`."""
    qp = request.query_params
    return {p.name: p.parse(qp.get(p.name)) for p in params if p.where == "query"}


async def form(request: Request) -> dict[str, str]:
    """The POST body as a flat dict: urlencoded form or a JSON object (values as strings)."""
    body = await request.body()
    ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if ctype == "application/json":
        try:
            data = json.loads(body or b"{}")
        except ValueError:
            raise HTTPError(400, gettext("the request body is not valid JSON"), gettext("send a JSON object")) from None
        if not isinstance(data, dict):
            raise HTTPError(
                400, gettext("the JSON body must be an object"), gettext("e.g. {example}", example='{"on": true}')
            )
        endpoint = request.scope.get("pa.endpoint")
        known = {p.name: p for p in endpoint.params if p.where == "form"} if endpoint is not None else {}
        # fields this operation reads must have their JSON types; others are ignored, as in a form
        return {
            k: known[k].from_json(v)
            if k in known
            else (json.dumps(v) if isinstance(v, (list, dict)) else str(v).lower() if isinstance(v, bool) else str(v))
            for k, v in data.items()
        }
    if ctype in ("", "application/x-www-form-urlencoded"):
        try:
            return dict(parse_qsl(body.decode("utf-8"), keep_blank_values=True))
        except UnicodeDecodeError:
            raise HTTPError(400, gettext("the form body is not UTF-8"), gettext("send UTF-8")) from None
    raise HTTPError(
        415,
        gettext("unsupported content type {ctype!r}", ctype=ctype),
        "send application/x-www-form-urlencoded or application/json",
    )


# -- readers, tokens, CSRF ----------------------------------------------------------------
def bearer_reader(request: Request) -> Reader | None:
    """The reader whose API token is in `Authorization: Bearer ...` (None when absent; 401 when wrong)."""
    auth = request.headers.get("authorization", "")
    if not auth.lower().startswith("bearer "):
        return None
    token = auth[7:].strip()
    r = lib(request).readers.by_token(token) if token else None
    if r is None:
        raise HTTPError(
            401,
            gettext("unknown API token"),
            gettext("use a reader's token: it is shown on that reader's Saved page (/saved)"),
        )
    return r


def _token_reader(request: Request) -> Reader | None:
    if "pa.bearer_reader" not in request.scope:
        request.scope["pa.bearer_reader"] = bearer_reader(request)
    return request.scope["pa.bearer_reader"]  # type: ignore[no-any-return]


def is_owner_request(request: Request) -> bool:
    """A request the local owner makes: the server is bound to loopback, so is the client (with no
    proxy between), and the page asked for a loopback name (not a rebinding page's own name)."""
    return (
        bool(request.scope.get("pa.owner_signin"))
        and auth.client_is_loopback(request)
        and auth.is_loopback_name(request.headers.get("host"))
    )


def signed_in_reader(request: Request) -> Reader | None:
    """The reader of a bearer token or a valid session cookie (never of a bare name)."""
    r = _token_reader(request)
    if r is not None:
        return r
    if "pa.session_reader" not in request.scope:
        value = request.cookies.get(auth.SESSION_COOKIE, "")
        request.scope["pa.session_reader"] = auth.session_reader(lib(request), value) if value else None
    return request.scope["pa.session_reader"]  # type: ignore[no-any-return]


def owner(request: Request) -> Reader | None:
    """The local owner's reader for a request from this machine to a loopback server (else None);
    looked up once per request."""
    if not is_owner_request(request):
        return None
    if "pa.owner" not in request.scope:
        request.scope["pa.owner"] = auth.owner_reader(lib(request))
    return request.scope["pa.owner"]  # type: ignore[no-any-return]


def reader_name(request: Request) -> str:
    """The name shown for this visitor: their reader, the owner's, or "" (not signed in)."""
    r = current_reader(request)
    if r is not None:
        return str(r.name)
    return auth.OWNER if is_owner_request(request) else ""


def current_reader(request: Request, create: bool = False) -> Reader | None:
    """The reader this request speaks for: a bearer token, a signed session cookie, or (only on a
    loopback server, from this machine) the owner. None for a visitor who has not signed in.

    Pages only read, so they do not create the reader (None until its first write); with
    `create`, the owner's reader is made on their first write, and anyone else gets a 401."""
    r = signed_in_reader(request) or owner(request)
    if r is not None or not create:
        return r
    if is_owner_request(request):
        request.scope["pa.owner"] = lib(request).readers.get(auth.OWNER)
        return request.scope["pa.owner"]  # type: ignore[no-any-return]
    raise HTTPError(
        401,
        gettext("sign in first: changes are saved for a reader"),
        gettext(
            "sign in on /signin with your reader name and token (`paperatlas readers token NAME` "
            "prints it), or create a new reader there; scripts send `Authorization: Bearer TOKEN`"
        ),
    )


def csrf_token(request: Request) -> str:
    """This browser's CSRF token (the double-submit cookie; issued by the middleware)."""
    return str(request.scope.get("pa.csrf") or "")


def new_csrf_token() -> str:
    return secrets.token_urlsafe(24)


async def check_write(request: Request) -> dict[str, str]:
    """Refuse the write unless it carries a bearer token or a CSRF token matching the cookie.

    Returns the parsed body. (Read-only mode is enforced earlier, by the middleware.)"""
    data = await form(request)
    if _token_reader(request) is not None:
        return data  # browsers never send this header on their own, so no CSRF check is needed
    cookie = request.cookies.get(CSRF_COOKIE, "")
    sent = request.headers.get(CSRF_HEADER) or data.get(CSRF_FIELD, "")
    if not cookie or not sent or not hmac.compare_digest(cookie.encode(), sent.encode()):
        raise HTTPError(
            403,
            gettext("missing or wrong CSRF token"),
            gettext("reload the page and try again; scripts send `Authorization: Bearer <reader token>`"),
        )
    return data


# -- responses ---------------------------------------------------------------------------
def paper_url(pid: str) -> str:
    return "/paper/" + quote(pid, safe="/:@-._~")


def spoken_list(parts: list[str]) -> str:
    """`a`, `a and b`, `a, b and c` in the page's language (Chinese: a、b 和 c)."""
    if len(parts) <= 1:
        return "".join(parts)
    if len(parts) == 2:
        return gettext("{a} and {b}", a=parts[0], b=parts[1])
    head = parts[0]
    for x in parts[1:-2]:
        head = gettext("{a}, {b}", a=head, b=x)
    return gettext("{a}, {b} and {c}", a=head, b=parts[-2], c=parts[-1])


def plain_reason(reason: str) -> str:
    """Why a related paper is listed, in plain words of the page's language ("shares: a, b" ->
    "both discuss a and b"; the phrases themselves stay as the papers write them)."""
    if reason.startswith("shares: "):
        parts = [x.strip() for x in reason[len("shares: ") :].split(",") if x.strip()]
        return gettext("both discuss {topics}", topics=spoken_list(parts))
    if reason == "close in meaning":
        return gettext("similar in meaning")
    return reason


def author_url(name: str) -> str:
    """The author page of `name` (any spelling: the page matches it as search does)."""
    return "/author/" + quote(" ".join(str(name).split()), safe="")


def _embedding_status(library: Any) -> dict[str, Any]:
    """For the banner: papers still waiting for a vector (search by meaning does not see them yet)."""
    try:
        return library.embedding_status()  # type: ignore[no-any-return]
    except Exception:  # noqa: BLE001 - a banner must not break the page
        return {}


# Strings that app.js / personal.js show; base.html embeds their translations (JSON) for `_()` there.
JS_MESSAGES = (
    N_("search"),
    N_("Search"),
    N_("Search failed; press Enter to retry."),
    N_("Could not save"),
    N_("Unstar"),
    N_("Star"),
    N_("Star (save)"),
    N_("Saved ★"),
    N_("Removed from saved"),
    N_("BibTeX copied"),
    N_("next / previous paper"),
    N_("star the selected paper"),
    N_("open it"),
    N_("leave the search box"),
    N_("this help"),
    N_("not interested"),
    N_("Fewer papers like this"),
    N_("Undone"),
    N_("Tagged"),
    N_("saved · Atom feed"),
    N_("Search saved: see Digest for its feed"),
)


def ui_language(request: Request) -> str:
    """This request's UI language ('en' or 'zh'), chosen by the Language middleware."""
    return str(request.scope.get("pa.lang") or i18n.current())


def language_links(request: Request) -> list[dict[str, Any]]:
    """The header's language switch: this page in each language (`?lang=` also sets the cookie)."""
    here = ui_language(request)
    out = []
    for code, (name, tag, _file) in i18n.LANGUAGES.items():
        params = [(k, v) for k, v in request.query_params.multi_items() if k != "lang"] + [("lang", code)]
        out.append(
            {
                "code": code,
                "name": name,
                "tag": tag,
                "current": code == here,
                "url": request.url.path + "?" + urlencode(params),
            }
        )
    return out


def render(request: Request, template: str, status: int = 200, **ctx: Any) -> HTMLResponse:
    w = web(request)
    lang = ui_language(request)
    i18n.set_language(lang)  # a sync view runs in a worker thread: make sure its templates see it
    ctx.update(
        request=request,
        reader=reader_name(request),
        signed_in=signed_in_reader(request) is not None,
        readers=[r.name for r in w.library.readers.all()] if not w.read_only else [],
        read_only=w.read_only,
        csrf=csrf_token(request),
        nav=w.nav,
        v=w.asset_version,
        path=request.url.path,
        embedding=_embedding_status(w.library),
        lang=lang,
        html_lang=i18n.html_lang(lang),
        languages=language_links(request),
        js_strings={m: gettext(m, lang) for m in JS_MESSAGES} if lang != i18n.DEFAULT else {},
    )
    if ctx.get("as_reader"):  # the reader a write just signed in: its cookie reaches the next request only
        ctx.update(reader=ctx["as_reader"], signed_in=True)
    html = w.env.get_template(template).render(ctx)
    return HTMLResponse(html, status_code=status)


def json_response(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    text = json.dumps(data, ensure_ascii=False, default=str, separators=(",", ":"))
    # the same JSON value, but never markup, even for a client that sniffs it as HTML
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    body = text.encode("utf-8")
    return Response(body, status_code=status, media_type="application/json", headers=headers)


def error_response(request: Request, status: int, message: str, fix: str = "") -> Response:
    if wants_json(request):
        return json_response({"error": message, "fix": fix, "status": status}, status)
    try:
        return render(request, "error.html", status=status, status_code=status, message=message, fix=fix)
    except Exception:  # the error page itself must not fail
        return HTMLResponse(f"<h1>{status}</h1>", status_code=status)


def done(request: Request, data: dict[str, Any], fallback: str) -> Response:
    """Answer a write: JSON for scripts and fetch(), else back to the page it came from."""
    if wants_json(request):
        return json_response(data)
    return RedirectResponse(same_site_path(request, request.headers.get("referer", "")) or fallback, status_code=303)


def same_site_path(request: Request, url: str) -> str:
    """The path (and query) of `url` when it is an http(s) URL of this very site, else "".
    Redirects go to a path, never to a whole URL: no open redirect, no other scheme."""
    if not url or len(url) > 4096:
        return ""
    try:
        parts = urlsplit(url)
    except ValueError:
        return ""
    host = request.headers.get("host", "")
    if parts.scheme not in ("http", "https") or not host or parts.netloc.lower() != host.lower():
        return ""
    path = parts.path if parts.path.startswith("/") and not parts.path.startswith("//") else "/"
    if any(ord(ch) < 32 or ch == "\\" for ch in path + parts.query):
        return ""
    return path + ("?" + parts.query if parts.query else "")
