"""Pages of the language-model layer: /ask, /cheatsheet, /tldr (stored or extractive TL;DRs, sends
nothing) and POST /generate (a TL;DR, FAQ or translation from the configured endpoint).

Asking the model is a write: it spends the owner's model (and key) and stores a text. So every path
that reaches the endpoint (POST /ask, POST /generate, a Chinese search's English rendering) goes
through `spend_guard`: a request from this site's own pages (Fetch Metadata / Origin), by a signed-in
reader or the local owner, within that reader's budget; GET /ask only shows a stored answer. The
model's work is cancelled when its client goes away (`run_cancellable`, `stream_events`)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from contextvars import copy_context
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from ..errors import NotFound, PaperatlasError
from ..i18n import N_, gettext
from ..llm.client import CANCEL, LlmBusy, LlmError, NoEndpoint, no_endpoint
from ..models import Paper
from . import auth
from .common import (
    Endpoint,
    HTTPError,
    Param,
    check_write,
    current_reader,
    done,
    is_owner_request,
    json_response,
    lib,
    query,
    render,
    wants_json,
)

NAV = [(N_("Ask"), "/ask")]
LANG_CHOICES = ("en", "zh")


def _lang(request: Request, given: str | None = None) -> str:
    from ..i18n import current

    lang = (given or current() or "en").split("-")[0].split("_")[0].lower()
    return lang if lang in LANG_CHOICES else "en"


# model requests one reader may start: BUDGET_BURST at once, then one every BUDGET_EVERY seconds
# (docs/security.md states it; kept per server process, like the sign-up limit)
BUDGET_BURST = 60
BUDGET_EVERY = 30.0
BUDGET = auth.SignupLimit(burst=BUDGET_BURST, every=BUDGET_EVERY)


def _cross_site(request: Request) -> bool:
    from ..hosts import foreign_origin

    site = request.headers.get("sec-fetch-site")
    if site is not None and site.lower() not in ("same-origin", "none"):
        return True
    return foreign_origin(request.headers.get("origin"), request.headers.get("host"))


def spend_guard(request: Request) -> Callable[[str], None]:
    """What `lib.llm` calls before it asks the endpoint for this request: it raises unless the request
    comes from this site, from a signed-in reader or the local owner, within the reader's budget.
    Evaluated only when a model would be asked (a page that sends nothing pays nothing)."""

    def permit(task: str) -> None:
        if _cross_site(request):
            raise HTTPError(
                403,
                gettext("another site's page may not ask this server's language model"),
                gettext("ask from this site's own pages"),
            )
        r = current_reader(request)
        who = r.name if r is not None else (auth.OWNER if is_owner_request(request) else "")
        if not who:
            raise HTTPError(
                401,
                gettext("sign in first: asking the language model is kept for readers"),
                gettext("sign in on /signin; scripts send `Authorization: Bearer TOKEN`"),
            )
        wait = BUDGET.take(f"{id(lib(request))}:{who}")
        if wait:
            raise HTTPError(
                429,
                gettext(
                    "{name} has used this server's language-model budget ({n} requests, then one every {s} s)",
                    name=who,
                    n=BUDGET_BURST,
                    s=int(BUDGET_EVERY),
                ),
                gettext("try again in {s} s", s=int(wait) + 1),
            )

    return permit


async def run_cancellable(request: Request, work: Callable[[], Any]) -> Any:
    """`work()` in a thread; when the client goes away before it ends, its model request is closed
    (the client library sees the CANCEL event) and the work ends with LlmCancelled."""
    cancel = threading.Event()
    ctx = copy_context()
    ctx.run(CANCEL.set, cancel)
    loop = asyncio.get_running_loop()
    fut = loop.run_in_executor(None, ctx.run, work)
    try:
        while True:
            done_, _ = await asyncio.wait({fut}, timeout=0.25)
            if done_:
                return fut.result()
            if await request.is_disconnected():
                cancel.set()
                return await fut
    except asyncio.CancelledError:
        cancel.set()
        raise


def _llm_error(e: PaperatlasError) -> HTTPError:
    if isinstance(e, HTTPError):
        return e
    if isinstance(e, LlmBusy):
        return HTTPError(503, e.message, e.fix)
    if isinstance(e, NoEndpoint):
        return HTTPError(
            409,
            gettext("no language model is configured on this server, so nothing was generated"),
            gettext("set $PAPERATLAS_LLM_URL to an OpenAI-compatible endpoint, then start `paperatlas serve` again"),
        )
    if isinstance(e, LlmError):
        return HTTPError(502, e.message, e.fix)
    return HTTPError(404 if isinstance(e, NotFound) else 400, e.message, e.fix)


def paper_context(request: Request, p: Paper) -> dict[str, Any]:
    """What the paper page shows of the language-model layer (stored texts only: a page view sends nothing)."""
    L = lib(request)
    lang = _lang(request)
    tl = L.llm.stored_tldrs([p.id], lang).get(p.id)
    ctx: dict[str, Any] = {
        "tldr": tl,
        "extractive": None,
        "faq": None,
        "title": None,
        "abstract": None,
        "can_generate": L.llm.configured and not L.read_only,
        "configured": L.llm.configured,
        "lang": lang,
        "not_kept": request.query_params.get("llm") == "not-kept",
    }
    if tl is None:
        ctx["extractive"] = L.llm.tldr(p.id, "en", mode="extractive")
    try:
        ctx["faq"] = L.llm.faq(p.id, lang, generate=False)
    except PaperatlasError:
        ctx["faq"] = None
    if lang != "en":
        ctx["title"] = L.llm.stored_titles([p.id], lang).get(p.id)
        ctx["abstract"] = L.llm.stored_abstract(p.id, lang)
    return ctx


def results_context(request: Request, papers: list[Paper]) -> dict[str, dict[str, Any]]:
    """paper id -> {"title": translated title or None, "tldr": stored or extractive TL;DR}, for result lists
    (the TL;DR opens on demand; nothing is sent to a model)."""
    if not papers:
        return {}
    L = lib(request)
    lang = _lang(request)
    ids = [p.id for p in papers]
    titles = L.llm.stored_titles(ids, lang) if lang != "en" else {}
    tldrs = L.llm.stored_tldrs(ids, lang)
    from ..llm.extractive import EXTRACTIVE_MODEL, extractive_tldr
    from ..llm.models import Generated

    out: dict[str, dict[str, Any]] = {}
    for p in papers:
        tl = tldrs.get(p.id)
        if tl is None and p.abstract.strip():
            tl = Generated(p.id, "tldr", "en", extractive_tldr(p.abstract), EXTRACTIVE_MODEL, False, EXTRACTIVE_MODEL)
        out[p.id] = {"title": titles.get(p.id), "tldr": tl}
    return out


# -- /tldr: stored or extractive TL;DRs of some papers (search results ask for them on demand) ---------------
TLDR_PARAMS = [
    Param("ids", str, None, "paper ids separated by commas (at most 50)", required=True, max_length=5000),
    Param("lang", str, "", "en or zh (default: the page language)", choices=LANG_CHOICES),
]


def tldrs(request: Request) -> Response:
    a = query(request, TLDR_PARAMS)
    L = lib(request)
    lang = _lang(request, a["lang"])
    ids = [i.strip() for i in a["ids"].split(",") if i.strip()][:50]
    stored = L.llm.stored_tldrs(ids, lang)
    out = []
    for pid in ids:
        g = stored.get(pid)
        if g is None:
            try:
                g = L.llm.tldr(pid, "en", mode="extractive")
            except PaperatlasError:
                continue
        out.append(g.to_dict())
    return json_response({"lang": lang, "tldrs": out})


# -- POST /generate -------------------------------------------------------------------------------------------
GENERATE_PARAMS = [
    Param("id", str, None, "the paper id", required=True, where="form", max_length=1000),
    Param("task", str, "tldr", "what to generate", choices=("tldr", "faq", "translate"), where="form"),
    Param("lang", str, "", "en or zh (default: the page language)", choices=LANG_CHOICES, where="form"),
    Param(
        "stream",
        bool,
        False,
        "true: answer as server-sent events, the text as it comes, then a `done` event with the result "
        "(or an `error` event)",
        where="form",
    ),
]


def stream_events(work: Callable[[Callable[[str], None]], dict[str, Any]]) -> Response:
    """Run `work(on_text)` in a thread and answer as server-sent events: `data: {"text": piece}` for each
    piece as the model writes it, then one `event: done` with the whole result (the text as it is kept,
    which replaces the pieces: a retry in a firmer language streams too) or one `event: error` with the
    message and its fix. The stream always ends with one of the two."""
    import asyncio
    import json
    import threading

    from starlette.responses import StreamingResponse

    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
    cancel = threading.Event()

    def put(item: tuple[str, Any]) -> None:
        loop.call_soon_threadsafe(queue.put_nowait, item)

    def run() -> None:
        CANCEL.set(cancel)  # this thread's own context: the request is closed when the reader leaves
        try:
            put(("done", work(lambda piece: put(("text", piece)))))
        except PaperatlasError as e:
            err = e if isinstance(e, HTTPError) else _llm_error(e)
            put(("error", {"status": err.status, "error": err.message, "fix": err.fix}))
        except Exception as e:  # noqa: BLE001 - the stream must end with an event, whatever failed
            put(("error", {"status": 500, "error": f"generation failed: {type(e).__name__}: {e}", "fix": ""}))

    threading.Thread(target=copy_context().run, args=(run,), name="llm-stream", daemon=True).start()

    def sse(data: Any, event: str = "") -> str:
        body = json.dumps(data, ensure_ascii=False, default=str)
        return (f"event: {event}\n" if event else "") + f"data: {body}\n\n"

    async def events() -> Any:
        try:
            while True:
                kind, data = await queue.get()
                if kind == "text":
                    yield sse({"text": data})
                    continue
                yield sse(data, kind)
                return
        finally:  # ended, or the client went away (the response task is cancelled): stop the model
            cancel.set()

    return StreamingResponse(
        events(), media_type="text/event-stream", headers={"cache-control": "no-store", "x-accel-buffering": "no"}
    )


async def generate(request: Request) -> Response:
    """Make (or fetch from the library) a TL;DR, FAQ or translation; slow the first time (a model writes it)."""
    data = await check_write(request)
    a = {p.name: p.parse(data.get(p.name)) for p in GENERATE_PARAMS}
    L = lib(request)
    lang = _lang(request, a["lang"])

    def work(on_text: Callable[[str], None] | None = None) -> dict[str, Any]:
        if a["task"] == "tldr":
            return L.llm.tldr(a["id"], lang, mode="generate", on_text=on_text).to_dict()
        if a["task"] == "faq":
            f = L.llm.faq(a["id"], lang)
            return f.to_dict() if f else {}
        return L.llm.translate(a["id"], "zh" if lang == "en" else lang, on_text=on_text).to_dict()

    if a["stream"]:
        if not L.llm.configured:  # refused at once, as JSON, before any stream starts
            raise _llm_error(no_endpoint())
        return stream_events(work)
    try:
        result = await run_cancellable(request, work)
    except PaperatlasError as e:
        raise _llm_error(e) from None
    from .common import paper_url

    if wants_json(request):
        return done(request, result, paper_url(a["id"]))
    # back to the page it came from; written in another language than asked, nothing was kept, and the
    # page says so rather than showing nothing (an earlier attempt's mark goes either way)
    return back_to_page(request, paper_url(a["id"]), not_kept=bool(result.get("note")))


def back_to_page(request: Request, fallback: str, not_kept: bool) -> Response:
    from urllib.parse import parse_qsl, urlencode, urlsplit

    from starlette.responses import RedirectResponse

    from .common import same_site_path

    target = urlsplit(same_site_path(request, request.headers.get("referer", "")) or fallback)
    params = [(k, v) for k, v in parse_qsl(target.query, keep_blank_values=True) if k != "llm"]
    if not_kept:
        params.append(("llm", "not-kept"))
    return RedirectResponse(target.path + (f"?{urlencode(params)}" if params else ""), status_code=303)


# -- /ask -----------------------------------------------------------------------------------------------------
# a question has at least one visible character (an empty one is a 400 the API document states)
QUESTION = "[^\\s\\x1c-\\x1f\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]"
ASK_PARAMS = [
    Param("q", str, "", "the question (English or Chinese)", max_length=1000, pattern=QUESTION),
    Param("limit", int, 5, "abstracts the answer may use", minimum=1, maximum=10),
]
ASK_POST_PARAMS = [
    Param(
        "q",
        str,
        None,
        "the question (English or Chinese)",
        required=True,
        where="form",
        max_length=1000,
        pattern=QUESTION,
    ),
    Param("limit", int, 5, "abstracts the answer may use", minimum=1, maximum=10, where="form"),
    Param(
        "stream",
        bool,
        False,
        "true: answer as server-sent events (the text as it comes, then `done` with the answer, or `error`)",
        where="form",
    ),
]


def _no_question() -> HTTPError:
    return HTTPError(400, gettext("missing parameter {name!r}", name="q"), gettext("add q=... to the request"))


async def ask(request: Request) -> Response:
    """GET /ask: the form, and the answer the library holds for `q` (sends nothing to a model)."""
    from starlette.concurrency import run_in_threadpool

    a = query(request, ASK_PARAMS)
    L = lib(request)
    answer = None
    if a["q"].strip():
        answer = await run_in_threadpool(L.llm.stored_answer, a["q"], a["limit"])
    if not a["q"].strip() and not request.url.path.endswith(".json"):
        return _ask_page(request, "", None, None)  # the form, whoever asks (a script's bearer included)
    if wants_json(request):
        if not a["q"].strip():
            raise _no_question()
        if answer is None:
            raise HTTPError(
                404,
                gettext("no stored answer to this question"),
                gettext("POST /ask with q=... asks the model (a signed-in reader, from this site)"),
            )
        return json_response(answer.to_dict())
    return _ask_page(request, a["q"], answer, None)


def _ask_page(request: Request, q: str, answer: Any, error: HTTPError | None) -> Response:
    L = lib(request)
    cfg = L.llm.config if L.llm.configured else None
    return render(
        request,
        "ask.html",
        q=q,
        answer=answer,
        error=error,
        configured=cfg is not None,
        deadline=int(cfg.deadline) if cfg else 0,
    )


async def ask_post(request: Request) -> Response:
    """POST /ask: answer the question from the retrieved abstracts with the configured model."""
    data = await check_write(request)
    a = {p.name: p.parse(data.get(p.name)) for p in ASK_POST_PARAMS}
    L = lib(request)
    if not a["q"].strip():
        raise _no_question()
    if a["stream"]:
        if not L.llm.configured:
            raise _llm_error(no_endpoint())
        return stream_events(lambda on_text: L.llm.ask(a["q"], a["limit"], on_text=on_text).to_dict())
    try:
        if not L.llm.configured:
            raise no_endpoint()
        answer = await run_cancellable(request, lambda: L.llm.ask(a["q"], a["limit"]))
    except PaperatlasError as e:
        err = _llm_error(e)
        if wants_json(request):
            raise err from None
        return _ask_page(request, a["q"], None, err)
    if wants_json(request):
        return json_response(answer.to_dict())
    return _ask_page(request, a["q"], answer, None)


# -- /cheatsheet ----------------------------------------------------------------------------------------------
def cheatsheet(request: Request) -> Response:
    from .common import current_reader

    L = lib(request)
    r = current_reader(request)
    lang = _lang(request)
    items = L.llm.cheatsheet(r.name if r else None, lang, generate=False) if r else []
    if wants_json(request):
        return json_response({"lang": lang, "items": [i.to_dict() for i in items]})
    return render(request, "cheatsheet.html", items=items, configured=L.llm.configured)


ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "question": {"type": "string"},
        "lang": {"type": "string"},
        "answer": {"type": "string"},
        "cited": {"type": "array", "items": {"type": "string"}, "description": "paper ids, all among retrieved"},
        "not_found": {"type": "boolean"},
        "retrieved": {"type": "array", "items": {"type": "object"}},
        "model": {"type": "string"},
        "generated": {"type": "boolean"},
        "cached": {"type": "boolean"},
        "passages": {
            "type": "array",
            "items": {"type": "object"},
            "description": "the evidence sent to the model: {id, page, section, text}; page null for an abstract",
        },
        "closest": {
            "type": "array",
            "items": {"type": "object"},
            "description": "with not_found: the sentences read that share most of the question's words "
            "({id, page, section, text}), quoted, not an answer",
        },
    },
}

ENDPOINTS = [
    Endpoint(
        "/ask",
        ask,
        params=ASK_PARAMS,
        json_twin=True,
        tags=["llm"],
        response=ANSWER_SCHEMA,
        api_required=("q",),
        summary="The stored answer to a question, from the retrieved abstracts only, each claim cited by paper "
        "id (sends nothing to a model; POST /ask asks one).",
    ),
    Endpoint(
        "/ask",
        ask_post,
        methods=("POST",),
        params=ASK_POST_PARAMS,
        writes=True,
        tags=["llm"],
        response=ANSWER_SCHEMA,
        statuses=(409, 502, 503),
        summary="Ask the papers: the configured language model answers from the retrieved abstracts only, each "
        "claim cited by paper id (a signed-in reader, from this site, within the reader's budget).",
    ),
    Endpoint(
        "/cheatsheet",
        cheatsheet,
        json_twin=True,
        tags=["llm"],
        summary="The poster cheat-sheet of the reader's saved papers: a TL;DR and questions for each.",
    ),
    Endpoint(
        "/tldr",
        tldrs,
        params=TLDR_PARAMS,
        json_twin=True,
        api_only=True,
        tags=["llm"],
        summary="TL;DRs of some papers: stored generated ones, else the abstract's contribution sentence "
        "(sends nothing to a model).",
    ),
    Endpoint(
        "/generate",
        generate,
        methods=("POST",),
        params=GENERATE_PARAMS,
        writes=True,
        tags=["llm"],
        statuses=(409, 502, 503),
        summary="Generate (or fetch from the library) a paper's TL;DR, FAQ or translation.",
    ),
]
