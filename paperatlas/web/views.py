"""One function per page; the same function answers the `.json` twin (the HTTP API)."""

from __future__ import annotations

import hmac
import json
import os
import sys
import threading
import time
from typing import Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from .. import settings
from ..i18n import N_, gettext
from ..errors import PaperatlasError, StoreUnavailable
from ..library import SORTABLE, Library, filter_table
from ..links import paper_links
from ..report.facets import paper_institutions
from ..export import EXPORT_FORMATS, export, paper_bibtex
from ..models import Hit, Hits, Paper
from ..search.cjk import has_cjk
from ..search.engine import MODES
from ..readers import FEEDBACK_KINDS, MAX_TAG, Reader
from . import auth
from .common import (
    library_params,
    PAGING_PARAMS,
    LEGACY_READER_COOKIE,
    Endpoint,
    HTTPError,
    Param,
    author_url,
    check_write,
    plain_reason,
    current_reader,
    is_owner_request,
    owner,
    done,
    json_response,
    lib,
    paper_url,
    query,
    reader_name_pattern,
    render,
    wants_json,
    web,
)

NAV = [(N_("Search"), "/search"), (N_("Browse"), "/browse"), (N_("Saved"), "/saved"), (N_("Stats"), "/stats")]

# search modes as the search form shows them (`_(m)` in search.html)
MODE_LABELS = (N_("hybrid"), N_("keyword"), N_("semantic"))

# the API's schemas come from the shapes themselves (models.py), with what the web adds
PAPER_SCHEMA: dict[str, Any] = Paper.json_schema()
HIT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        **Hit.json_schema()["properties"],
        "page": {"type": "string", "description": "path of the paper page"},
    },
}


def hit_json(h: Hit) -> dict[str, Any]:
    """A hit as the web's JSON gives it: the one serialiser (Hit.to_dict) plus the paper page's path."""
    return {**h.to_dict(), "page": paper_url(h.paper.id)}


def _brief(d: dict[str, Any]) -> dict[str, Any]:
    """A related paper as the paper page's JSON lists it: a few keys of the hit's one serialisation."""
    return {k: d[k] for k in ("id", "title", "title_derived", "venue", "year", "score")}


def _facets(request: Request) -> dict[str, Any]:
    """Venues, years, statuses and per venue-year counts; cached until the papers change."""
    w = web(request)
    version = w.library.version()
    cached = w.cache.get("facets")
    if cached and cached[0] == version:
        return cached[1]  # type: ignore[no-any-return]
    rows = w.library.facet_counts()
    groups: dict[tuple[str, int | None], dict[str, Any]] = {}
    for venue, year, status, n in rows:
        g = groups.setdefault((venue, year), {"venue": venue, "year": year, "papers": 0, "status": {}, "derived": 0})
        g["papers"] += n
        if status:
            g["status"][status] = g["status"].get(status, 0) + n
    facets = {
        "venues": sorted({v for v, _, _, _ in rows if v}),
        "years": sorted({y for _, y, _, _ in rows if y}, reverse=True),
        "statuses": sorted({s for _, _, s, _ in rows if s}),
        "groups": sorted(groups.values(), key=lambda g: (g["venue"] or "~", -(g["year"] or 0))),
    }
    w.cache["facets"] = (version, facets)
    return facets


def _liked(request: Request, ids: list[str]) -> set[str]:
    r = current_reader(request)
    if r is None or not ids:
        return set()
    fb = lib(request).readers.feedback_for(r, ids)
    return {pid for pid, kinds in fb.items() if "like" in kinds}


# -- search ------------------------------------------------------------------------------------
# the orders the capabilities contribute (the classes': known before any library opens)
CONTRIBUTED_SORTS = list(filter_table().sorts.values())
FACET_LABELS = (N_("institution"), N_("country"))  # search.html shows a set filter as `_(name)`: value
# the search's own parameters; the library's filters (Library.filters) join them (Endpoint.filters)
SEARCH_PARAMS = [
    Param("q", str, "", 'the query: words, or "quoted phrases" that must appear', max_length=1000),
    Param("mode", str, "hybrid", "keyword (BM25), semantic (embeddings) or hybrid (both fused)", choices=MODES),
    Param(
        "sort",
        str,
        None,
        "relevance when absent; or an order the library's capabilities contribute: "
        + "; ".join(f"{s.name}: {s.help}" for s in CONTRIBUTED_SORTS),
        choices=tuple(s.name for s in CONTRIBUTED_SORTS),
    ),
    *PAGING_PARAMS,
    Param("fragment", bool, False, "HTML only: return just the results block (search as you type)"),
]


def search(request: Request) -> Response:
    a = query(request, library_params(request, SEARCH_PARAMS))
    q, per_page = a["q"].strip(), a["per_page"]
    offset = (a["page"] - 1) * per_page
    hits: Hits = Hits()
    error: PaperatlasError | None = None
    L = lib(request)
    filters = {f.name: a[f.name] for f in L.filters}
    if q or L.filters.lists_alone(filters):
        try:
            hits = L.search(q, a["mode"], per_page + 1, offset, sort=a["sort"], **filters)
        except StoreUnavailable:
            raise  # 503 for the whole page: the query is fine, the database is not
        except PaperatlasError as e:
            if wants_json(request):
                raise HTTPError(400, e.message, e.fix) from None
            error = e
    hits.query, hits.mode, hits.filters = q, a["mode"], filters
    # a query in Chinese (CJK): the multilingual index's state, when it does not cover every paper
    crosslingual = _crosslingual(request, q, a["mode"])
    hits.notes.update(crosslingual=crosslingual, not_embedded=L.not_embedded(a["mode"]))
    hits = hits.page(a["page"], per_page)
    has_more = hits.has_more
    if wants_json(request):
        return json_response(hits.to_dict(hit_json))
    from .llm_views import results_context

    ctx = dict(
        a=a,
        q=q,
        hits=hits,
        has_more=has_more,
        error=error,
        offset=offset,
        crosslingual=crosslingual,
        # every filter that is set: the pager's links and the "save this search" form keep them all
        set_filters={k: v for k, v in filters.items() if v is not None},
        liked=_liked(request, [h.paper.id for h in hits]),
        llm=results_context(request, [h.paper for h in hits]),
    )
    if a["fragment"]:
        return render(request, "_results.html", **ctx)
    programme = _programme(request, a["session"])
    return render(
        request, "search.html", facets=_facets(request), modes=MODES, programme=programme, sorts=_sorts(L), **ctx
    )


def _sorts(L: Library) -> list[Any]:
    """The contributed orders the search form offers: each once its owner says papers have values
    for it (citations after `enrich`), so a library without them shows no menu that changes nothing.
    Asked on every search page, so it is the owner's one cheap question, not a read of the papers."""
    return [s for s in L.filters.sorts.values() if s.available is None or s.available(L)]


def _programme(request: Request, session: str | None) -> dict[str, Any]:
    """The days and sessions the search form offers as filters, and which session is chosen
    ({} without a programme; a session asked by words of its name shows as a chip instead)."""
    L = lib(request)
    if not L.programme.feeds():
        return {}
    sessions = L.programme.sessions()
    selected = next((s.session_id for s in sessions if session in (s.session_id, s.session)), "")
    return {"days": sorted({s.day for s in sessions if s.day}), "sessions": sessions, "selected": selected}


def _say_build_stopped(e: Exception) -> None:
    print(f"paperatlas: the multilingual index build stopped: {e}", file=sys.stderr)


def _say_build_progress(every: float = 30.0) -> Any:
    """A progress callback that prints a line to the server's stderr at most every `every` seconds."""
    last = [time.monotonic()]

    def progress(done: int, total: int) -> None:
        if time.monotonic() - last[0] >= every or done == total:
            last[0] = time.monotonic()
            print(f"paperatlas: multilingual index: {done} of {total} papers", file=sys.stderr)

    return progress


def _yield_cpu_to_queries() -> None:
    """Lower the calling thread's CPU priority, so that on a busy machine the server's queries get the
    cores before the background build does (Linux sets a nice value per thread; elsewhere nothing)."""
    lower = int(settings.get("multilingual_build_niceness"))
    if not lower or not sys.platform.startswith("linux"):  # elsewhere a thread id is no process id
        return
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + lower))
    except (AttributeError, OSError):  # no per-thread priority here: the build runs as it is
        pass


def _build_in_background(library: Library) -> threading.Thread | None:
    """Build the multilingual index in a server thread, unless a build already runs (None then); the
    build's progress shows in `library.multilingual.status()`, and on the server's stderr."""
    if not library.multilingual.claim():  # two first Chinese queries at once start one build
        return None
    progress = _say_build_progress()

    def work() -> None:
        _yield_cpu_to_queries()
        try:
            library.multilingual.build(progress=progress)
        except Exception as e:  # noqa: BLE001 - the server keeps serving; say why
            library.multilingual.release()
            _say_build_stopped(e)

    t = threading.Thread(target=work, name="embed-multilingual", daemon=True)
    t.start()
    return t


def _crosslingual(request: Request, q: str, mode: str) -> dict[str, Any] | None:
    """For a Chinese (CJK) query while the multilingual index is missing or partial: its state, with
    progress and ETA. `serve` starts building it in the background on the first such query."""
    if not q or mode == "keyword" or not has_cjk(q):
        return None
    library = lib(request)
    try:
        st = library.multilingual.status()
        if st["embedded"] >= st["papers"]:
            return None
        if web(request).build_multilingual and not st["building"]:
            if _build_in_background(library) is not None:
                print(
                    "paperatlas: a query in Chinese: building the multilingual index in the background "
                    f"({st['papers'] - st['embedded']} papers; progress: any Chinese search, page or .json)",
                    file=sys.stderr,
                )
                st = library.multilingual.status()
        # a partial index is searched only once it covers most papers (search/settings.py): say which
        st["searched"] = library.engine.multilingual_index() is not None
    except PaperatlasError:
        return None
    return st


# -- authors -------------------------------------------------------------------------------
AUTHOR_PARAMS = [
    Param(
        "name",
        str,
        None,
        'the author\'s name as written on a paper, or any spelling search accepts ("P. Liang", "percy liang")',
        where="path",
    ),
]
AUTHOR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "the spelling with the most papers"},
        "names": {"type": "array", "items": {"type": "string"}, "description": "every spelling the name matched"},
        "count": {"type": "integer"},
        "papers": {"type": "array", "items": PAPER_SCHEMA},
        "institutions": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "country": {"type": "string"},
                    "papers": {"type": "integer"},
                },
            },
            "description": "the institutions their papers give for them (extra.affiliations), most papers first",
        },
        "coauthors": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "papers": {"type": "integer"}, "page": {"type": "string"}},
            },
        },
        "topics": {
            "type": "array",
            "items": {"type": "object", "properties": {"topic": {"type": "string"}, "papers": {"type": "integer"}}},
            "description": "map topics of their papers when the map is built, else primary areas and keywords",
        },
    },
}


def author(request: Request) -> Response:
    name = " ".join(request.path_params["name"].split())
    if not name:
        raise HTTPError(404, "no author named", "open an author from a paper page, e.g. /author/Percy%20Liang")
    prof = lib(request).authors.get(name)  # NotFound -> 404 with a fix
    for c in prof["coauthors"]:
        c["page"] = author_url(c["name"])
    if wants_json(request):
        return json_response(
            {
                **prof,
                "count": len(prof["papers"]),
                "page": author_url(prof["name"]),
                "papers": [{**p.public(), "page": paper_url(p.id)} for p in prof["papers"]],
            }
        )
    return render(request, "author.html", asked=name, prof=prof, liked=_liked(request, [p.id for p in prof["papers"]]))


# -- browse ------------------------------------------------------------------------------
# the columns, then what the capabilities contribute (citations, rising)
BROWSE_SORTS = ("rowid", "title", "id", "status", "year", *(s.name for s in CONTRIBUTED_SORTS))
BROWSE_PARAMS = [
    Param("venue", str, None, "the venue; without it, the list of venues and years", max_length=200),
    Param("year", int, None, "the year"),
    Param("status", str, None, "only this status, e.g. Oral", max_length=100),
    Param(
        "sort",
        str,
        "rowid",
        "rowid (list order), title, id, status, year, " + ", ".join(f"{s.name} ({s.help})" for s in CONTRIBUTED_SORTS),
        choices=BROWSE_SORTS,
    ),
    Param("order", str, "asc", "asc or desc", choices=("asc", "desc")),
    Param("page", int, 1, "page number, from 1", minimum=1, maximum=100000),
    Param("per_page", int, 100, "papers per page", minimum=1, maximum=1000),
]
# the library's filters join them (Endpoint.filters), but for the columns, which browse words itself
BROWSE_OWN = ("venue", "year", "status")
assert set(BROWSE_SORTS) <= SORTABLE | {s.name for s in CONTRIBUTED_SORTS}


def browse(request: Request) -> Response:
    a = query(request, library_params(request, BROWSE_PARAMS, skip=BROWSE_OWN))
    L = lib(request)
    facets = _facets(request)
    if not a["venue"] and not a["year"]:
        if wants_json(request):
            return json_response({"groups": facets["groups"], "papers": L.count()})
        return render(request, "browse.html", a=a, facets=facets, papers=None)
    facet = {f.name: a[f.name] for f in L.filters if f.name not in BROWSE_OWN}
    total = L.count(a["venue"], a["year"])
    shown = L.count(a["venue"], a["year"], a["status"], **facet) if a["status"] or any(facet.values()) else total
    offset = (a["page"] - 1) * a["per_page"]
    papers = L.papers(
        a["venue"], a["year"], a["status"], a["per_page"], offset, a["sort"], a["order"] == "desc", **facet
    )
    group = (
        next(
            (
                g
                for g in facets["groups"]
                if (g["venue"] or "").lower() == a["venue"].lower() and (not a["year"] or g["year"] == a["year"])
            ),
            None,
        )
        if a["venue"]
        else None
    )
    status_counts: dict[str, int] = {}
    for g in facets["groups"]:
        if (not a["venue"] or (g["venue"] or "").lower() == a["venue"].lower()) and (
            not a["year"] or g["year"] == a["year"]
        ):
            for s, n in g["status"].items():
                status_counts[s] = status_counts.get(s, 0) + n
    derived = sum(1 for p in papers if p.title_derived)
    if wants_json(request):
        return json_response(
            {
                "venue": a["venue"],
                "year": a["year"],
                "status": a["status"],
                **facet,
                "total": total,
                "matching": shown,
                "status_counts": status_counts,
                "sort": a["sort"],
                "order": a["order"],
                "page": a["page"],
                "per_page": a["per_page"],
                "papers": [{**p.public(), "page": paper_url(p.id)} for p in papers],
            }
        )
    pages = max(1, -(-shown // a["per_page"]))
    return render(
        request,
        "browse.html",
        a=a,
        facets=facets,
        papers=papers,
        total=total,
        shown=shown,
        pages=pages,
        offset=offset,
        status_counts=status_counts,
        group=group,
        derived=derived,
        liked=_liked(request, [p.id for p in papers]),
    )


# -- paper ---------------------------------------------------------------------------------
PAPER_PARAMS = [
    Param("paper_id", str, None, "the paper id, e.g. neurips2023/NnMEadcdyD (may contain /)", where="path"),
    Param("q", str, "", "HTML only: highlight these words in the abstract", max_length=1000),
]


def paper(request: Request) -> Response:
    pid = request.path_params["paper_id"]
    L = lib(request)
    p = L.get(pid)
    if p.id != pid:  # an alias of a merged duplicate: send to the canonical address
        suffix = ".json" if request.url.path.endswith(".json") else ""
        return RedirectResponse(paper_url(p.id) + suffix, status_code=301)
    a = query(request, PAPER_PARAMS)
    related: list[Hit] = []
    related_error = ""
    try:
        related = L.similar(p.id, 8)
    except PaperatlasError as e:
        related_error = e.message
    r = current_reader(request)
    fb = L.readers.feedback_for(r, [p.id]).get(p.id, set())
    starred, dismissed = "like" in fb, "dislike" in fb
    tags = L.readers.tags(r, p.id).get(p.id, [])
    bib = paper_bibtex(p)
    aliases = L.aliases(p.id)
    links = paper_links(p, aliases)
    events = L.programme.events_for(p.id)
    contributed = L.paper_fields(p.id)
    if wants_json(request):
        return json_response(
            {
                **p.public(),
                **contributed,
                "page": paper_url(p.id),
                "bibtex": bib,
                "starred": starred,
                "dismissed": dismissed,
                "events": [e.to_dict() for e in events],
                "tags": tags,
                "aliases": aliases,
                "links": L.links(p.id),
                "read_links": [{"label": label, "url": u} for label, u in links],
                "related": [
                    {**_brief(h.to_dict()), "reason": plain_reason(h.reason), "page": paper_url(h.paper.id)}
                    for h in related
                ],
            }
        )
    from .llm_views import paper_context

    return render(
        request,
        "paper.html",
        p=p,
        fulltext=L.fulltext.has(p.id),
        q=a["q"],
        related=related,
        related_error=related_error,
        links=links,
        institutions=paper_institutions(p.extra),
        tldr=str(p.extra.get("tldr") or "").strip()
        or str((contributed.get("semantic_scholar") or {}).get("tldr") or ""),
        llm=paper_context(request, p),
        area=str(p.extra.get("primary_area") or "").strip(),
        starred=starred,
        dismissed=dismissed,
        tags=tags,
        bibtex=bib,
        events=events,
        liked=_liked(request, [h.paper.id for h in related]),
        cite=contributed,
        cite_papers=_cite_papers(L, contributed),
        hood=L.citations.neighbourhood(p.id) if contributed.get("openalex_id") else {},
    )


def _cite_papers(L: Any, cite: dict[str, Any], most: int = 20) -> dict[str, list[Any]]:
    """The library papers a paper cites and that cite it, to list on its page (at most `most` each)."""
    out: dict[str, list[Any]] = {}
    for key in ("references", "cited_by"):
        ids = list(cite.get(key) or [])[:most]
        out[key] = L.get_many(ids) if ids else []
    return out


STAR_PARAMS = [
    Param("paper_id", str, None, "the paper id", where="path"),
    Param("on", bool, True, "true to star (like), false to unstar", where="form"),
]


async def set_feedback(request: Request, params: list[Param], kind: str, field: str) -> Response:
    """POST one paper's like (star) or dislike ("not interested") for the current reader, or undo it.
    `params[1]` is the form's `on` parameter; `field` names the flag in the JSON answer."""
    data = await check_write(request)
    on = params[1].parse(data.get("on"))
    L = lib(request)
    p = L.get(request.path_params["paper_id"])
    r = current_reader(request, create=True)
    assert r is not None
    L.readers.set_feedback(r, [p.id], kind, on)
    return done(request, {"id": p.id, field: on, "reader": r.name}, paper_url(p.id))


async def star(request: Request) -> Response:
    return await set_feedback(request, STAR_PARAMS, "like", "starred")


TAG_PARAMS = [
    Param("paper_id", str, None, "the paper id", where="path"),
    Param("tag", str, None, f"the tag (1-{MAX_TAG} characters)", required=True, max_length=MAX_TAG, where="form"),
    Param("action", str, "add", "add or remove", choices=("add", "remove"), where="form"),
]


async def tag(request: Request) -> Response:
    data = await check_write(request)
    t = TAG_PARAMS[1].parse((data.get("tag") or "").strip())
    action = TAG_PARAMS[2].parse(data.get("action"))
    L = lib(request)
    p = L.get(request.path_params["paper_id"])
    r = current_reader(request, create=True)
    assert r is not None
    L.readers.tag(r, [p.id], t, remove=action == "remove")
    tags = L.readers.tags(r, p.id).get(p.id, [])
    return done(request, {"id": p.id, "tags": tags}, paper_url(p.id))


FEEDBACK_PARAMS = [
    Param(
        "ids",
        str,
        None,
        "paper ids: a JSON list or comma-separated",
        required=True,
        max_length=60000,
        where="form",
        json_list=True,
    ),
    Param("kind", str, "like", "like (star), dislike (not interested) or seen", choices=FEEDBACK_KINDS, where="form"),
    Param("on", bool, True, "true to set, false to clear", where="form"),
]


async def feedback(request: Request) -> Response:
    data = await check_write(request)
    raw = FEEDBACK_PARAMS[0].parse(data.get("ids"))
    try:
        ids = json.loads(raw) if raw.lstrip().startswith("[") else [i.strip() for i in raw.split(",") if i.strip()]
    except ValueError:
        raise HTTPError(
            400, gettext("ids is not a valid JSON list"), gettext("send e.g. {example}", example='["id1", "id2"]')
        ) from None
    if not isinstance(ids, list) or not ids or not all(isinstance(i, str) and i for i in ids) or len(ids) > 1000:
        raise HTTPError(
            400,
            gettext("ids must be a list of 1 to 1000 paper ids"),
            gettext("send e.g. {example}", example='["id1", "id2"]'),
        )
    kind = FEEDBACK_PARAMS[1].parse(data.get("kind"))
    on = FEEDBACK_PARAMS[2].parse(data.get("on"))
    r = current_reader(request, create=True)
    lib(request).readers.set_feedback(r, ids, kind, on)
    return json_response({"reader": r.name if r else None, "kind": kind, "on": on, "ids": ids})


SIGNIN_PARAMS = [
    Param(
        "name",
        str,
        None,
        "the reader's name (a new name creates that reader): 1-64 characters, no control or invisible ones",
        required=True,
        max_length=64,
        where="form",
        pattern=reader_name_pattern,
    ),
    Param(
        "token",
        str,
        None,
        "the reader's secret token (`paperatlas readers token NAME`); not needed to create a new reader",
        max_length=200,
        where="form",
    ),
]


def _session_response(request: Request, r: Reader, resp: Response) -> Response:
    L = lib(request)
    auth.end_session(L, request.cookies.get(auth.SESSION_COOKIE, ""))  # the session this browser had
    resp.set_cookie(
        auth.SESSION_COOKIE,
        auth.new_session(L, r),
        max_age=auth.SESSION_MAX_AGE,
        path="/",
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )
    resp.delete_cookie(LEGACY_READER_COOKIE, path="/")
    return resp


def _may_create_reader(request: Request, name: str) -> None:
    """Refuse a visitor's new reader unless this server takes sign-ups, the name is not the
    owner's, and this client has not made too many just now (the local owner is never refused)."""
    if is_owner_request(request):
        return
    if auth.is_owner_name(name):
        raise HTTPError(
            403,
            gettext("the reader name {name!r} belongs to this library's owner", name=name),
            gettext("choose another name"),
        )
    w = web(request)
    if not w.signups:
        raise HTTPError(
            403,
            gettext("this server does not let visitors create readers"),
            gettext(
                "ask its owner to run `paperatlas readers add NAME` and give you the token, then "
                "sign in with the name and token"
            ),
        )
    wait = w.signup_limit.take(request.client.host if request.client else "")
    if wait:
        minutes = max(1, round(wait / 60))
        raise HTTPError(
            429,
            gettext("too many new readers from your address"),
            gettext("try again in {n} minutes, or sign in as a reader you made already", n=minutes),
            headers={"retry-after": str(int(wait) + 1)},
        )


async def sign_in(request: Request) -> Response:
    """Sign in as a reader with their token, or create a new reader (and sign in as them)."""
    data = await check_write(request)
    L = lib(request)
    try:
        name = L.readers.check_name(SIGNIN_PARAMS[0].parse(data.get("name")))
    except PaperatlasError as e:
        raise HTTPError(400, e.message, e.fix) from None
    token = SIGNIN_PARAMS[1].parse(data.get("token")) or ""
    r = L.readers.find(name)
    created = False
    if r is None:
        _may_create_reader(request, name)
        r, created = L.readers.get(name), True
    elif not (token and hmac.compare_digest(r.token.encode(), token.strip().encode())):
        local_owner = owner(request)
        if local_owner is None or local_owner.id != r.id:
            raise HTTPError(
                403,
                gettext("wrong or missing token for reader {name!r}", name=name),
                gettext(
                    "`paperatlas readers token {name}` prints it (run it where the library is); "
                    "or choose a new name to create a new reader",
                    name=name,
                ),
            )
    out = {"reader": r.public(), "created": created}
    if created:
        out["token"] = r.token  # shown once, to the one who made it (it is also on their Saved page)
        if not wants_json(request):
            # the token cannot travel in a redirect's URL: this answer is the page that shows it, once
            return _session_response(
                request, r, render(request, "signin.html", as_reader=r.name, new_token=r.token, signups=True)
            )
    return _session_response(request, r, done(request, out, "/"))


async def sign_out(request: Request) -> Response:
    await check_write(request)
    # the session ends in the library, not just in this browser: a copied cookie stops working too
    auth.end_session(lib(request), request.cookies.get(auth.SESSION_COOKIE, ""))
    resp = done(request, {"signed_out": True}, "/")
    resp.delete_cookie(auth.SESSION_COOKIE, path="/")
    resp.delete_cookie(LEGACY_READER_COOKIE, path="/")
    return resp


def signin_page(request: Request) -> Response:
    return render(request, "signin.html", signups=web(request).signups or is_owner_request(request))


# -- saved ---------------------------------------------------------------------------------
SAVED_PARAMS = [Param("tag", str, None, "only papers with this tag", max_length=40)]
EXPORT_PARAMS = [
    Param("format", str, "bibtex", "bibtex, csv, markdown, json, jsonl, ris or csl-json", choices=EXPORT_FORMATS),
    *SAVED_PARAMS,
]
EXPORT_FILES = {
    "bibtex": ("bib", "application/x-bibtex"),
    "csv": ("csv", "text/csv"),
    "markdown": ("md", "text/markdown"),
    "json": ("json", "application/json"),
    "jsonl": ("jsonl", "application/x-ndjson"),
    "ris": ("ris", "application/x-research-info-systems"),
    "csl-json": ("csl.json", "application/vnd.citationstyles.csl+json"),
}


def _saved(request: Request, tag_filter: str | None) -> tuple[list[Paper], dict[str, list[str]]]:
    r = current_reader(request)
    if r is None:
        return [], {}
    L = lib(request)
    papers = L.readers.liked(r)
    tags = L.readers.tags(r)
    if tag_filter:
        papers = [p for p in papers if tag_filter in tags.get(p.id, [])]
    return papers, tags


def saved(request: Request) -> Response:
    a = query(request, SAVED_PARAMS)
    papers, tags = _saved(request, a["tag"])
    if wants_json(request):
        return json_response(
            {
                "reader": current_reader(request).name if current_reader(request) else None,
                "tag": a["tag"],
                "count": len(papers),
                "papers": [{**p.public(), "tags": tags.get(p.id, []), "page": paper_url(p.id)} for p in papers],
            }
        )
    all_tags = sorted({t for pid, ts in tags.items() for t in ts})
    r = current_reader(request)
    return render(
        request,
        "saved.html",
        a=a,
        papers=papers,
        tags=tags,
        all_tags=all_tags,
        token=r.token if r and not web(request).read_only else "",
        formats=[
            ("bibtex", "BibTeX"),
            ("ris", "RIS (Zotero)"),
            ("csl-json", "CSL-JSON"),
            ("csv", "CSV"),
            ("markdown", "Markdown"),
            ("json", "JSON"),
        ],
        liked={p.id for p in papers},
    )


def saved_export(request: Request) -> Response:
    a = query(request, EXPORT_PARAMS)
    papers, _ = _saved(request, a["tag"])
    ext, media = EXPORT_FILES[a["format"]]
    # a header is latin-1: the file name keeps only the tag's ASCII letters and digits
    tag = "".join(c for c in a["tag"] or "" if c.isascii() and c.isalnum())
    name = f"paperatlas-saved{'-' + tag if tag else ''}.{ext}"
    return Response(
        export(papers, a["format"]),
        media_type=f"{media}; charset=utf-8",
        headers={"content-disposition": f'attachment; filename="{name}"'},
    )


# -- stats ---------------------------------------------------------------------------------
def stats(request: Request) -> Response:
    L = lib(request)
    s = L.stats()
    s.pop("path", None)  # the server's file system is not the visitor's business
    try:
        emb = L.embedder
        idx = L.engine.vector_index()
        s["embedding"] = {
            "model": emb.id,
            "dimensions": getattr(emb, "dimensions", None),
            "indexed": len(idx) if idx is not None else 0,
            "index_bytes": int(idx.matrix.nbytes) if idx is not None and hasattr(idx, "matrix") else 0,
        }
    except PaperatlasError as e:
        s["embedding"] = {"error": e.message}
    try:
        s["embedding"].update({k: v for k, v in L.embedding_status().items() if k != "model"})
    except PaperatlasError:
        pass
    s["readers"] = len(L.readers.all())
    s["read_only"] = web(request).read_only
    if wants_json(request):
        return json_response(s)
    return render(request, "stats.html", s=s, facets=_facets(request))


def healthz(request: Request) -> Response:
    """200 only while the library answers: a load balancer must not send readers to a server whose
    database is gone (every page would fail)."""
    try:
        lib(request).ping()
    except PaperatlasError as e:
        return json_response({"ok": False, "error": e.message, "fix": e.fix}, 503, {"Retry-After": "5"})
    return json_response({"ok": True})


def home(request: Request) -> Response:
    return search(request)


ENDPOINTS = [
    Endpoint("/", home, summary="Home: the search page."),
    Endpoint(
        "/search",
        search,
        params=SEARCH_PARAMS,
        filters="query",
        json_twin=True,
        tags=["papers"],
        summary="Search papers by keyword, meaning, or both.",
        response={
            "type": "object",
            "properties": {
                "query": {"type": "string"},
                "mode": {"type": "string"},
                "filters": {"type": "object"},
                "total": {"type": "integer", "description": "hits in all pages (those past the relevance floor)"},
                "total_is_lower_bound": {
                    "type": "boolean",
                    "description": "a candidate list was cut at the search depth: maybe more",
                },
                "no_good_match": {
                    "type": "boolean",
                    "description": "semantic / hybrid: nothing was a real match, "
                    "so no hits (random letters, off-domain questions)",
                },
                "read_as": {
                    "type": "string",
                    "description": "a query in Chinese (CJK): the English the configured language model "
                    "rendered it as, which was searched too (absent when none was)",
                },
                "page": {"type": "integer"},
                "per_page": {"type": "integer"},
                "has_more": {"type": "boolean"},
                "not_embedded": {
                    "type": "integer",
                    "description": "papers not embedded yet (matched by keyword only until they are)",
                },
                "hits": {"type": "array", "items": HIT_SCHEMA},
            },
        },
    ),
    Endpoint(
        "/author/{name:path}",
        author,
        params=AUTHOR_PARAMS,
        json_twin=True,
        tags=["papers"],
        summary="One author: their papers in this library, co-authors and topics.",
        response=AUTHOR_SCHEMA,
    ),
    Endpoint(
        "/browse",
        browse,
        params=BROWSE_PARAMS,
        filters="query",
        skip_filters=BROWSE_OWN,
        json_twin=True,
        tags=["papers"],
        summary="A venue-year's whole list (sortable, paginated), or the venues and years with counts.",
    ),
    Endpoint(
        "/paper/{paper_id:path}/star",
        star,
        methods=("POST",),
        params=STAR_PARAMS,
        writes=True,
        tags=["saved"],
        summary="Star (save) or unstar a paper for the current reader.",
    ),
    Endpoint(
        "/paper/{paper_id:path}/tags",
        tag,
        methods=("POST",),
        params=TAG_PARAMS,
        writes=True,
        tags=["saved"],
        summary="Add or remove a tag on a paper for the current reader.",
    ),
    Endpoint(
        "/paper/{paper_id:path}",
        paper,
        params=PAPER_PARAMS,
        json_twin=True,
        tags=["papers"],
        summary="One paper: metadata, abstract, related papers, BibTeX, the reader's star and tags.",
        response={
            "type": "object",
            "properties": {
                **PAPER_SCHEMA["properties"],
                "bibtex": {"type": "string"},
                "starred": {"type": "boolean"},
                "read_links": {
                    "type": "array",
                    "description": "where to read it, best first: PDF / OpenReview / "
                    "arXiv / DOI / source (http(s) only)",
                    "items": {"type": "object", "properties": {"label": {"type": "string"}, "url": {"type": "string"}}},
                },
                "tags": {"type": "array", "items": {"type": "string"}},
                "related": {"type": "array", "items": {"type": "object"}},
            },
        },
    ),
    Endpoint(
        "/saved",
        saved,
        params=SAVED_PARAMS,
        json_twin=True,
        tags=["saved"],
        summary="The current reader's starred papers with their tags.",
    ),
    Endpoint(
        "/saved/export",
        saved_export,
        params=EXPORT_PARAMS,
        api_only=True,
        tags=["saved"],
        media=tuple(sorted({m for _, m in EXPORT_FILES.values()})),
        media_schemas={
            m: {"type": "array", "items": {"type": "object"}}
            for m in ("application/json", "application/vnd.citationstyles.csl+json")
        },
        summary="Download the starred papers as BibTeX, CSV, Markdown, JSON or JSONL.",
        response={"type": "string"},
    ),
    Endpoint(
        "/api/feedback",
        feedback,
        methods=("POST",),
        params=FEEDBACK_PARAMS,
        writes=True,
        tags=["saved"],
        summary="Set or clear like / dislike / seen on many papers at once (for scripts).",
    ),
    Endpoint(
        "/reader",
        sign_in,
        methods=("POST",),
        params=SIGNIN_PARAMS,
        writes=True,
        tags=["readers"],
        summary="Sign in as a reader with their token (a signed session cookie), or create a new reader.",
    ),
    Endpoint(
        "/signout",
        sign_out,
        methods=("POST",),
        writes=True,
        tags=["readers"],
        summary="Sign out (forget the session cookie).",
    ),
    Endpoint("/signin", signin_page, tags=["readers"], summary="The sign-in page (HTML)."),
    Endpoint(
        "/stats",
        stats,
        json_twin=True,
        tags=["meta"],
        summary="Counts per venue and year, the embedding model and index size.",
    ),
    Endpoint(
        "/healthz",
        healthz,
        api_only=True,
        tags=["meta"],
        summary="Health check: 200 while the library's database answers, 503 (with why) when it does not.",
        response={
            "type": "object",
            "properties": {"ok": {"type": "boolean"}, "error": {"type": "string"}, "fix": {"type": "string"}},
        },
    ),
]
