"""The full text of a paper in the web UI: /paper/{id}/read (its sections, captions and references,
page numbers linking to the stored PDF, a cited or searched passage highlighted by its `#p-N`
anchor), its .json twin (the same `FulltextView.to_dict()` as `paperatlas fulltext show --json`), and
/paper/{id}.pdf, the stored file itself."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import FileResponse, RedirectResponse, Response

from ..errors import PaperatlasError
from ..llm.reply import model_name
from .common import (
    Endpoint,
    HTTPError,
    Param,
    check_write,
    json_response,
    lib,
    paper_url,
    query,
    render,
    ui_language,
    wants_json,
)

BODY_PARAMS = [
    Param("q", str, "", "words to find in the full text of the papers whose PDF was read", max_length=1000),
    Param("limit", int, 20, "at most this many papers", minimum=1, maximum=100),
]
# passages one press of the reader page's button translates: a 1.5B model on 2 CPU cores takes a
# minute or two a passage, so a press is a few minutes at most, and the page shows what was done
TRANSLATE_STEP = 3
TRANSLATE_MAX = 10
READ_PARAMS = [
    Param("p", int, None, "the passage to highlight (its number, as in #p-N)", minimum=1),
    Param(
        "refused",
        int,
        0,
        "passages the last translate request kept in English (the page says so)",
        minimum=0,
        maximum=TRANSLATE_MAX,
    ),
]
TRANSLATE_PARAMS = [
    Param("lang", str, "zh", "the language to translate into", choices=("zh",), where="form"),
    Param(
        "max",
        int,
        TRANSLATE_STEP,
        "at most this many passages are sent to the model by this request (the next request goes on)",
        minimum=1,
        maximum=TRANSLATE_MAX,
        where="form",
    ),
]


def read(request: Request) -> Response:
    pid = request.path_params["paper_id"]
    L = lib(request)
    p = L.get(pid)
    if p.id != pid:  # an alias of a merged duplicate: send to the canonical address
        suffix = ".json" if request.url.path.endswith(".json") else ""
        return RedirectResponse(paper_url(p.id) + "/read" + suffix, status_code=301)
    a = query(request, READ_PARAMS)
    try:
        view = L.fulltext.show(p.id)
    except PaperatlasError as e:
        raise HTTPError(404, e.message, e.fix) from None
    # in Chinese: each section's stored translation beside the English (nothing is sent from here:
    # `paperatlas translate ID --full` makes them)
    translation = L.translator.translate(p.id, "zh", generate=False) if ui_language(request) == "zh" else None
    if wants_json(request):
        return json_response({**view.to_dict(), **({"translation": translation.to_dict()} if translation else {})})
    has_pdf = L.fulltext.pdf_path(p.id) is not None
    translated = {s.index: s for s in translation.sections if s.done} if translation else {}
    todo = None
    if translation is not None and len(translated) < len(translation.sections) and L.llm.configured:
        todo = L.translator.estimate([p.id], "zh") if not L.read_only else None
    return render(
        request,
        "read.html",
        p=p,
        doc=view.to_dict(),
        mark=a["p"],
        has_pdf=has_pdf,
        translated=translated,
        translation=translation,
        tr_model=model_name(next(iter(translated.values())).model) if translated else "",
        todo=todo,
        step=TRANSLATE_STEP,
        refused=a["refused"],
    )


async def translate_post(request: Request) -> Response:
    """POST /paper/{id}/translate: the sections not yet translated, through the configured model, at most
    `max` passages this request; back to the reader page in Chinese, which shows what is stored."""
    from .llm_views import _llm_error, run_cancellable

    data = await check_write(request)
    a = {x.name: x.parse(data.get(x.name)) for x in TRANSLATE_PARAMS}
    L = lib(request)
    p = L.get(request.path_params["paper_id"])
    try:
        if not L.llm.configured:
            from ..llm.client import no_endpoint

            raise no_endpoint()
        result = await run_cancellable(request, lambda: L.translator.translate(p.id, a["lang"], max_chunks=a["max"]))
    except PaperatlasError as e:
        raise _llm_error(e) from None
    if wants_json(request):
        return json_response(result.to_dict())
    # a passage the checker refused is kept in English; the page says how many (the notes are the JSON's)
    refused = sum(s.note.count("kept in the original") for s in result.sections)
    back = paper_url(p.id) + "/read?lang=zh" + (f"&refused={refused}" if refused else "")
    return RedirectResponse(back + "#translate", status_code=303)


def search_body(request: Request) -> Response:
    """Papers found by a passage of their body, each with the passage, its section and page."""
    L = lib(request)
    a = query(request, BODY_PARAMS)
    q = (a["q"] or "").strip()
    if not q and wants_json(request):
        raise HTTPError(400, "q is required: the words to find", "e.g. /search/body.json?q=triplet+loss")
    hits = L.fulltext.hits(q, a["limit"]) if q else []
    st = L.fulltext.status()
    if wants_json(request):
        # what is searched by meaning: passages embedded, of all stored (the rest by their words only)
        covered = {"passages": st["passages"], "embedded": st["embedded"], "by_meaning": L.fulltext.by_meaning}
        return json_response({"query": q, "hits": [h.to_dict() for h in hits], "coverage": covered})
    return render(
        request,
        "search_body.html",
        q=q,
        hits=hits,
        read=st["read"],
        papers=st["papers"],
        passages=st["passages"],
        embedded=st["embedded"],
        by_meaning=L.fulltext.by_meaning,
    )


def pdf(request: Request) -> Response:
    pid = request.path_params["paper_id"]
    L = lib(request)
    p = L.get(pid)
    path = L.fulltext.pdf_path(p.id)
    if path is None:
        raise HTTPError(
            404, f"no PDF is stored for paper {p.id}", f"attach one: `paperatlas fulltext add {p.id} FILE.pdf`"
        )
    # inline, so the browser opens it at the #page=N the reader page links to
    return FileResponse(
        path,
        media_type="application/pdf",
        headers={"Content-Disposition": "inline", "X-Content-Type-Options": "nosniff"},
    )


ENDPOINTS = [
    Endpoint(
        "/search/body",
        search_body,
        params=BODY_PARAMS,
        json_twin=True,
        tags=["papers"],
        api_required=("q",),
        summary="Search the full text of the papers whose PDF was read: each hit has the passage, its section and page.",
    ),
    Endpoint(
        "/paper/{paper_id:path}/read",
        read,
        params=READ_PARAMS,
        json_twin=True,
        tags=["papers"],
        statuses=(404,),
        summary="A paper's full text read from its PDF: sections with headings and pages, captions, references.",
    ),
    Endpoint(
        "/paper/{paper_id:path}/translate",
        translate_post,
        methods=("POST",),
        params=TRANSLATE_PARAMS,
        writes=True,
        tags=["llm"],
        statuses=(404, 409, 502, 503),
        summary="Translate the paper's sections not yet translated, at most `max` passages this request, through "
        "the configured language model (a signed-in reader, from this site, within the reader's budget).",
    ),
    Endpoint(
        "/paper/{paper_id:path}.pdf",
        pdf,
        tags=["papers"],
        statuses=(404,),
        media=("application/pdf",),
        summary="The PDF stored for a paper (the file its full text was read from).",
    ),
]
