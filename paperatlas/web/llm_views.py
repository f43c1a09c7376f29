"""Pages of the language-model layer: /ask, /cheatsheet, /tldr (stored or extractive TL;DRs, sends
nothing) and POST /generate (a TL;DR, FAQ or translation from the configured endpoint)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from ..errors import NotFound, PaperatlasError
from ..i18n import N_, gettext
from ..llm.client import LlmError, NoEndpoint, no_endpoint
from ..models import Paper
from .common import Endpoint, HTTPError, Param, check_write, done, json_response, lib, query, render, wants_json

NAV = [(N_("Ask"), "/ask")]
LANG_CHOICES = ("en", "zh")


def _lang(request: Request, given: str | None = None) -> str:
    from ..i18n import current

    lang = (given or current() or "en").split("-")[0].split("_")[0].lower()
    return lang if lang in LANG_CHOICES else "en"


def _llm_error(e: PaperatlasError) -> HTTPError:
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

    def put(item: tuple[str, Any]) -> None:
        loop.call_soon_threadsafe(queue.put_nowait, item)

    def run() -> None:
        try:
            put(("done", work(lambda piece: put(("text", piece)))))
        except PaperatlasError as e:
            err = e if isinstance(e, HTTPError) else _llm_error(e)
            put(("error", {"status": err.status, "error": err.message, "fix": err.fix}))
        except Exception as e:  # noqa: BLE001 - the stream must end with an event, whatever failed
            put(("error", {"status": 500, "error": f"generation failed: {type(e).__name__}: {e}", "fix": ""}))

    threading.Thread(target=run, name="llm-stream", daemon=True).start()

    def sse(data: Any, event: str = "") -> str:
        body = json.dumps(data, ensure_ascii=False, default=str)
        return (f"event: {event}\n" if event else "") + f"data: {body}\n\n"

    async def events() -> Any:
        while True:
            kind, data = await queue.get()
            if kind == "text":
                yield sse({"text": data})
                continue
            yield sse(data, kind)
            return

    return StreamingResponse(
        events(), media_type="text/event-stream", headers={"cache-control": "no-store", "x-accel-buffering": "no"}
    )


async def generate(request: Request) -> Response:
    """Make (or fetch from the library) a TL;DR, FAQ or translation; slow the first time (a model writes it)."""
    data = await check_write(request)
    a = {p.name: p.parse(data.get(p.name)) for p in GENERATE_PARAMS}
    L = lib(request)
    lang = _lang(request, a["lang"])
    from starlette.concurrency import run_in_threadpool

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
        result = await run_in_threadpool(work)
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
ASK_PARAMS = [
    Param("q", str, "", "the question (English or Chinese)", max_length=1000),
    Param("limit", int, 5, "abstracts the answer may use", minimum=1, maximum=10),
    Param(
        "stream",
        bool,
        False,
        "true: answer as server-sent events (the text as it comes, then `done` with the answer, or `error`)",
    ),
]


async def ask(request: Request) -> Response:
    a = query(request, ASK_PARAMS)
    L = lib(request)
    answer = None
    error = None
    if a["stream"]:
        if not a["q"].strip():
            raise HTTPError(400, gettext("missing parameter {name!r}", name="q"), gettext("add q=... to the request"))
        if not L.llm.configured:
            raise _llm_error(no_endpoint())
        return stream_events(lambda on_text: L.llm.ask(a["q"], a["limit"], on_text=on_text).to_dict())
    if a["q"].strip() and (L.llm.configured or wants_json(request)):  # the page says how to configure one
        from starlette.concurrency import run_in_threadpool

        try:
            answer = await run_in_threadpool(L.llm.ask, a["q"], a["limit"])
        except PaperatlasError as e:
            err = _llm_error(e)
            if wants_json(request):
                raise err from None
            error = err
    if wants_json(request):
        if answer is None:
            raise HTTPError(400, gettext("missing parameter {name!r}", name="q"), gettext("add q=... to the request"))
        return json_response(answer.to_dict())
    return render(request, "ask.html", q=a["q"], answer=answer, error=error, configured=L.llm.configured)


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
        statuses=(409, 502),
        summary="Ask the papers: an answer from the retrieved abstracts only, each claim cited by paper id "
        "(needs a configured language model).",
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
        statuses=(409, 502),
        summary="Generate (or fetch from the library) a paper's TL;DR, FAQ or translation.",
    ),
]
