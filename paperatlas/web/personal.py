"""Personal pages: For you, the editable profile, "A or B?" triage, reading groups,
the digest, Atom feeds and saved searches, and "not interested" on any paper.

Every page reads through the Library's recommendation methods (paperatlas/recommend);
this module only parses, renders and routes. Pages never create a reader (a visitor
who has not written anything yet sees the cold-start list as an unsaved reader); writes
go through `check_write` (CSRF token or bearer token) and create the reader on first use.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from .. import i18n
from ..i18n import N_, gettext
from ..contrib import SearchRequest
from ..errors import NotFound, PaperatlasError
from ..models import Hit, Paper
from ..recommend import DEFAULT_RECOMMENDER, RECOMMENDERS
from ..recommend.groups import METHODS as GROUP_METHODS
from ..recommend.triage import NEITHER
from ..readers import Reader
from . import auth
from .common import (
    FILTER_PARAMS,
    library_params,
    PAGING_PARAMS,
    Endpoint,
    HTTPError,
    Param,
    check_write,
    current_reader,
    done,
    is_owner_request,
    json_response,
    lib,
    paper_url,
    query,
    reader_name,
    render,
    signed_in_reader,
    wants_json,
)
from .views import CONTRIBUTED_SORTS, HIT_SCHEMA, PAPER_SCHEMA, hit_json, set_feedback

NAV = [
    (N_("For you"), "/foryou"),
    (N_("Triage"), "/triage"),
    (N_("Profile"), "/profile"),
    (N_("Group"), "/group"),
    (N_("Digest"), "/digest"),
]

METHODS = tuple(RECOMMENDERS.names())
# recommender names as the method switch shows them (`_(m)` in foryou.html)
METHOD_LABELS = (N_("default"), N_("svm"))
ATOM = "application/atom+xml; charset=utf-8"
PREVIEW = 5  # recommendations shown under the profile and triage, so an edit's effect is visible


# -- helpers ---------------------------------------------------------------------------------
def _viewer(request: Request) -> Reader:
    """The current reader, or an unsaved stand-in with no history (id 0 matches no rows),
    so that looking at a page never creates a reader."""
    r = current_reader(request)
    return r if r is not None else Reader(0, reader_name(request), "")


def _writer(request: Request) -> Reader:
    r = current_reader(request, create=True)
    assert r is not None
    return r


def _judgements(request: Request, r: Reader, ids: list[str]) -> tuple[set[str], set[str]]:
    """(liked, disliked) among `ids`, for the stars and "not interested" buttons."""
    if not r.id or not ids:
        return set(), set()
    fb = lib(request).readers.feedback_for(r, ids)
    return ({pid for pid, k in fb.items() if "like" in k}, {pid for pid, k in fb.items() if "dislike" in k})


def _paper_json(p: Paper) -> dict[str, Any]:
    return {**p.public(), "page": paper_url(p.id)}


def _counts(request: Request, r: Reader) -> dict[str, int]:
    if not r.id:
        return {"likes": 0, "dislikes": 0, "choices": 0}
    readers = lib(request).readers
    fb = readers.feedback(r)
    winners = [w for w, _, _ in readers.choices(r)]
    neither = winners.count(NEITHER)  # one "neither" answer is stored as two rows
    return {
        "likes": sum(f.kind == "like" for f in fb),
        "dislikes": sum(f.kind == "dislike" for f in fb),
        "choices": len(winners) - neither + (neither + 1) // 2,
    }


def _shared_reason(hits: list[Hit]) -> str:
    """The reason when every hit has the same one (the cold start): said once, not per card."""
    if len(hits) > 1 and all(h.reason == hits[0].reason for h in hits):
        return hits[0].reason
    return ""


def _recs(
    request: Request, r: Reader, limit: int, method: str = DEFAULT_RECOMMENDER, offset: int = 0, **filters: Any
) -> list[Hit]:
    # a PaperatlasError here becomes a 400 page / JSON error through the app's handler
    return lib(request).recommend.for_reader(r, limit, method, offset, **filters)


def _lang_suffix(first: bool = True) -> str:
    """Feed readers send no cookie: a feed URL shown on a Chinese page asks for Chinese itself."""
    if i18n.current() == i18n.DEFAULT:
        return ""
    return ("?" if first else "&") + f"lang={i18n.current()}"


def _feed_url(request: Request, r: Reader) -> str:
    """The reader's feed URL, with the key that stands in for sign-in ("" before the reader exists)."""
    if not r.id:
        return ""
    key = auth.feed_key(lib(request), "reader", r)
    return f"/feeds/reader/{quote(r.name, safe='')}.atom?key={key}" + _lang_suffix(first=False)


def _search_feed_url(request: Request, r: Reader, sid: Any) -> str:
    key = auth.feed_key(lib(request), "search", r, sid)
    return f"/feeds/search/{sid}.atom?key={key}" + _lang_suffix(first=False)


# -- for you ---------------------------------------------------------------------------------
FORYOU_PARAMS = [
    Param("method", str, DEFAULT_RECOMMENDER, "the recommender: " + ", ".join(METHODS), choices=METHODS),
    *FILTER_PARAMS,
    *PAGING_PARAMS,
    Param("fragment", bool, False, "HTML only: just the list (refreshed after a like)"),
]


def foryou(request: Request) -> Response:
    a = query(request, FORYOU_PARAMS)
    r = _viewer(request)
    per_page = a["per_page"]
    offset = (a["page"] - 1) * per_page
    hits = _recs(request, r, per_page + 1, a["method"], offset, venue=a["venue"], year=a["year"], status=a["status"])
    has_more = len(hits) > per_page
    hits = hits[:per_page]
    counts = _counts(request, r)
    if wants_json(request):
        return json_response(
            {
                "reader": r.name,
                "method": a["method"],
                "methods": list(METHODS),
                "filters": {"venue": a["venue"], "year": a["year"], "status": a["status"]},
                "page": a["page"],
                "per_page": per_page,
                "has_more": has_more,
                **counts,
                "hits": [hit_json(h) for h in hits],
            }
        )
    liked, disliked = _judgements(request, r, [h.paper.id for h in hits])
    ctx = dict(
        a=a,
        hits=hits,
        has_more=has_more,
        offset=offset,
        liked=liked,
        disliked=disliked,
        shared=_shared_reason(hits),
        counts=counts,
        methods=METHODS,
        pager=True,
    )
    if a["fragment"]:
        return render(request, "_foryou_list.html", **ctx)
    return render(request, "foryou.html", **ctx)


DISMISS_PARAMS = [
    Param("paper_id", str, None, "the paper id", where="path"),
    Param("on", bool, True, "true: not interested (fewer papers like it); false: undo", where="form"),
]


async def dismiss(request: Request) -> Response:
    return await set_feedback(request, DISMISS_PARAMS, "dislike", "dismissed")


# -- profile ---------------------------------------------------------------------------------
EDIT_PARAMS = [
    Param("remove", str, None, "an interest id to switch off (its likes stop counting)", max_length=40, where="form"),
    Param("restore", str, None, "an interest id to switch back on", max_length=40, where="form"),
    Param(
        "add_phrase",
        str,
        None,
        "a phrase to add to `interest`; without `interest`, a new interest",
        max_length=200,
        where="form",
    ),
    Param(
        "interest",
        str,
        None,
        "the interest id that add_phrase / remove_phrase / rename apply to",
        max_length=40,
        where="form",
    ),
    Param(
        "remove_phrase",
        str,
        None,
        "drop an added phrase of `interest`, or mute one of its key phrases",
        max_length=200,
        where="form",
    ),
    Param("rename", str, None, "a new label for `interest`", max_length=120, where="form"),
    Param(
        "preferences",
        str,
        None,
        'free-text preferences, e.g. "more theory, fewer benchmark papers"',
        max_length=2000,
        where="form",
    ),
]
EDITS = tuple(p.name for p in EDIT_PARAMS if p.name != "interest")


def _preview(request: Request, r: Reader) -> list[Hit]:
    return _recs(request, r, PREVIEW)


def profile(request: Request) -> Response:
    r = _viewer(request)
    prof = lib(request).recommend.profile(r)
    prof["reader"] = r.name  # the stand-in reader's name, not "me", when none exists yet
    if wants_json(request):
        return json_response(prof)
    top = _preview(request, r)
    liked, disliked = _judgements(request, r, [h.paper.id for h in top])
    return render(
        request, "profile.html", prof=prof, hits=top, liked=liked, disliked=disliked, shared=_shared_reason(top)
    )


async def edit_profile(request: Request) -> Response:
    data = await check_write(request)
    edits: dict[str, Any] = {}
    for p in EDIT_PARAMS:
        raw = (data.get(p.name) or "").strip()
        if raw:
            edits[p.name] = p.parse(raw)
        elif p.name == "preferences" and p.name in data:
            edits[p.name] = ""  # clearing the preferences is an edit; other blank fields are not
    if not any(k in edits for k in EDITS):
        raise HTTPError(400, gettext("no edit given"), gettext("send one of: {edits}", edits=", ".join(EDITS)))
    r = _writer(request)
    prof = lib(request).recommend.edit_profile(r, **edits)
    top = _preview(request, lib(request).readers.get(r.name))  # re-read: `r` holds the profile before the edit
    return done(request, {**prof, "recommendations": [hit_json(h) for h in top]}, "/profile")


# -- triage ----------------------------------------------------------------------------------
TRIAGE_PARAMS = [
    Param("venue", str, None, "only pairs from this venue", max_length=200),
    Param("year", int, None, "only pairs from this year"),
]
CHOOSE_PARAMS = [
    Param("winner", str, None, "the paper the reader prefers", required=True, max_length=300, where="form"),
    Param("loser", str, None, "the other paper of the pair", required=True, max_length=300, where="form"),
    Param(
        "action",
        str,
        "choose",
        "choose (winner over loser), neither (both rank lower) or skip (can't tell: both marked seen)",
        choices=("choose", "neither", "skip"),
        where="form",
    ),
]


def _pair(request: Request, r: Reader, venue: str | None, year: int | None) -> tuple[Paper, Paper] | None:
    return lib(request).recommend.triage_pair(r, venue, year)


def triage(request: Request) -> Response:
    a = query(request, TRIAGE_PARAMS)
    r = _viewer(request)
    pair = _pair(request, r, a["venue"], a["year"])
    counts = _counts(request, r)
    if wants_json(request):
        return json_response({"reader": r.name, **counts, "pair": [_paper_json(p) for p in pair] if pair else None})
    top = _preview(request, r)
    liked, disliked = _judgements(request, r, [h.paper.id for h in top])
    return render(
        request,
        "triage.html",
        a=a,
        pair=pair,
        counts=counts,
        hits=top,
        liked=liked,
        disliked=disliked,
        shared=_shared_reason(top),
    )


async def triage_choose(request: Request) -> Response:
    data = await check_write(request)
    winner, loser, action = (p.parse(data.get(p.name)) for p in CHOOSE_PARAMS)
    L = lib(request)
    r = _writer(request)
    if action == "skip":
        L.readers.set_feedback(r, [winner, loser], "seen", True)
    elif action == "neither":
        L.recommend.triage_neither(r, winner, loser)
    else:
        L.recommend.triage_choose(r, winner, loser)
    counts = _counts(request, r)
    if wants_json(request):
        pair = _pair(request, r, None, None)
        return json_response(
            {"reader": r.name, "action": action, **counts, "next": [_paper_json(p) for p in pair] if pair else None}
        )
    return done(request, {}, "/triage")


# -- reading groups ----------------------------------------------------------------------------
GROUP_PARAMS = [
    Param(
        "readers",
        str,
        None,
        "the members, comma-separated (default: the signed-in reader alone); only a "
        "member may ask, except the local owner",
        max_length=2000,
    ),
    Param("n", int, 10, "length of the list", minimum=1, maximum=50),
    Param(
        "method", str, "nash", "nash (fair: Nash welfare of Borda scores) or sum (sum of scores)", choices=GROUP_METHODS
    ),
    Param("venue", str, None, "only this venue", max_length=200),
    Param("year", int, None, "only this year"),
]


def _members(request: Request) -> list[str]:
    # checkboxes send readers=a&readers=b; scripts send readers=a,b
    raw = ",".join(request.query_params.getlist("readers"))
    GROUP_PARAMS[0].parse(raw)  # the length check
    return list(dict.fromkeys(x.strip() for x in raw.split(",") if x.strip()))


def _group_viewer(request: Request, members: list[str]) -> None:
    """A group list shows each member's ranks, so only a member may ask for one (the local owner
    may ask for any: the library and every reader in it are theirs)."""
    if is_owner_request(request):
        return
    r = signed_in_reader(request)
    if r is None:
        raise HTTPError(
            401,
            gettext("sign in first: a group list is shown to its members"),
            gettext("sign in on /signin, then make a list of yourself and the others"),
        )
    if r.name not in members:
        raise HTTPError(
            403,
            gettext("a group list is shown to its members only"),
            gettext("add yourself: readers={name},...", name=r.name),
        )


def _group_choices(request: Request) -> list[str]:
    """The readers the form offers: all of them to the local owner; to anyone else only
    themselves (a shared server does not list who else reads it)."""
    if is_owner_request(request):
        return [x.name for x in lib(request).readers.all()]
    r = signed_in_reader(request)
    return [r.name] if r is not None else []


def group(request: Request) -> Response:
    a = query(request, GROUP_PARAMS)
    members = _members(request)
    L = lib(request)
    result: dict[str, Any] | None = None
    error: PaperatlasError | None = None
    if not members and wants_json(request):
        me = current_reader(request)
        members = [me.name if me is not None else reader_name(request) or ""]
    if members or wants_json(request):
        _group_viewer(request, members)
        try:
            result = L.recommend.group_list(members, a["n"], a["method"], a["venue"], a["year"])
        except PaperatlasError as e:
            if wants_json(request):
                raise  # 404 for an unknown reader, else 400, by the app's error handler
            error = e
    if wants_json(request):
        assert result is not None
        return json_response(
            {
                "readers": members,
                "n": a["n"],
                "method": result["method"],
                "members": result["members"],
                "compare": result["compare"],
                "papers": [hit_json(h) for h in result["papers"]],
            }
        )
    other = "sum" if a["method"] == "nash" else "nash"
    summary = None
    if result:
        mine, theirs = result["members"], result["compare"][other]
        summary = {a["method"]: _summary(mine), other: _summary(theirs)}
        for m, t in zip(mine, theirs):
            m["other"] = t
    r = _viewer(request)
    liked, disliked = _judgements(request, r, [h.paper.id for h in result["papers"]] if result else [])
    return render(
        request,
        "group.html",
        a=a,
        members=members,
        result=result,
        error=error,
        other=other,
        hits=result["papers"] if result else [],
        summary=summary,
        all_readers=_group_choices(request),
        owner=is_owner_request(request),
        liked=liked,
        disliked=disliked,
    )


def _summary(stats: list[dict[str, Any]]) -> dict[str, float]:
    sat = [s["satisfaction"] for s in stats] or [0.0]
    return {"min": min(sat), "mean": sum(sat) / len(sat)}


# -- digest, feeds, saved searches ---------------------------------------------------------------
DIGEST_PARAMS = [
    Param(
        "since",
        str,
        None,
        "only papers added to the library on or after this date (YYYY-MM-DD)",
        max_length=40,
        format="date",
    ),
    Param("limit", int, 20, "how many papers", minimum=1, maximum=100),
    Param(
        "format",
        str,
        None,
        "markdown, html or atom: the digest as a file instead of this page",
        choices=("markdown", "html", "atom"),
    ),
]
DIGEST_FILES = {"markdown": "text/markdown; charset=utf-8", "html": "text/html; charset=utf-8", "atom": ATOM}


def _searches(request: Request, r: Reader) -> list[dict[str, Any]]:
    if not r.id:
        return []
    return [{**s, "feed": _search_feed_url(request, r, s["id"])} for s in lib(request).readers.saved_searches(r)]


def digest(request: Request) -> Response:
    a = query(request, DIGEST_PARAMS)
    since = a["since"]
    r = _viewer(request)
    L = lib(request)
    feed = _feed_url(request, r)
    if a["format"]:
        body = L.recommend.digest(
            r, since, a["limit"], a["format"], link=str(request.base_url).rstrip("/") + (feed or "/digest")
        )
        ext = "md" if a["format"] == "markdown" else a["format"]
        return Response(
            body,
            media_type=DIGEST_FILES[a["format"]],
            headers={"content-disposition": f'inline; filename="digest.{ext}"'},
        )
    hits = L.recommend.for_reader(r, a["limit"], since=since)
    searches = _searches(request, r)
    if wants_json(request):
        return json_response(
            {
                "reader": r.name,
                "since": since,
                "feed": feed,
                "count": len(hits),
                "hits": [hit_json(h) for h in hits],
                "saved_searches": searches,
            }
        )
    return render(
        request,
        "digest.html",
        a=a,
        since=since,
        hits=hits,
        feed=feed,
        searches=searches,
        shared=_shared_reason(hits),
        liked=set(),
        disliked=set(),
    )


SEEN_PARAMS = [Param("ids", str, None, "paper ids, comma-separated", required=True, max_length=60000, where="form")]


async def mark_seen(request: Request) -> Response:
    data = await check_write(request)
    ids = [i.strip() for i in SEEN_PARAMS[0].parse(data.get("ids")).split(",") if i.strip()]
    if len(ids) > 1000:
        raise HTTPError(400, gettext("at most 1000 ids at once"), gettext("send fewer"))
    r = _writer(request)
    lib(request).readers.set_feedback(r, ids, "seen", True)
    return done(request, {"reader": r.name, "seen": len(ids)}, "/digest")


FEED_PARAMS = [
    Param("limit", int, 20, "how many entries", minimum=1, maximum=100),
    Param("key", str, None, "the feed's key, as in the URL the Digest page gives (feeds are private)", max_length=64),
]
NO_FEED = N_("copy the feed's URL, key included, from the reader's Digest page")


def reader_feed(request: Request) -> Response:
    a = query(request, FEED_PARAMS)
    L = lib(request)
    name = request.path_params["name"]
    r = L.readers.find(name)  # a feed URL never creates a reader
    # one answer for "no such reader" and "wrong key": a feed URL reveals nothing without its key
    if r is None or not auth.check_feed_key(L, "reader", r, a["key"] or ""):
        raise NotFound(gettext("no feed for reader {name!r} with this key", name=name), gettext(NO_FEED))
    return Response(L.recommend.digest(r, None, a["limit"], "atom", link=str(request.url)), media_type=ATOM)


def search_feed(request: Request) -> Response:
    a = query(request, FEED_PARAMS)
    L = lib(request)
    sid = request.path_params["search_id"]
    owner = L.readers.saved_search_owner(sid)  # the feed URL carries only the search's id
    if owner is None or not auth.check_feed_key(L, "search", owner, a["key"] or "", sid):
        raise NotFound(gettext("no saved search {id} with this key", id=sid), gettext(NO_FEED))
    return Response(L.recommend.saved_search_feed(owner, sid, a["limit"], link=str(request.url)), media_type=ATOM)


# holds a character that is not white space (what str.strip() removes): a query of blanks is no query
VISIBLE = "[^\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]"
SAVE_PARAMS = [
    Param("q", str, None, "the query", required=True, max_length=1000, where="form", pattern=VISIBLE),
    Param("name", str, None, "a name (default: the query and its filters)", max_length=200, where="form"),
    Param(
        "mode", str, "hybrid", "keyword, semantic or hybrid", choices=("keyword", "semantic", "hybrid"), where="form"
    ),
    Param(
        "sort",
        str,
        None,
        "an order instead of relevance: " + ", ".join(s.name for s in CONTRIBUTED_SORTS),
        choices=tuple(s.name for s in CONTRIBUTED_SORTS),
        where="form",
    ),
]  # and every filter of the library (Endpoint.filters): a saved search keeps them all


async def save_search(request: Request) -> Response:
    data = await check_write(request)
    L = lib(request)
    a = {p.name: p.parse((data.get(p.name) or "").strip()) for p in library_params(request, SAVE_PARAMS, "form")}
    # what the feed replays (SearchRequest.from_params): the mode and every filter that is set
    req = SearchRequest(
        a["q"], a["mode"], L.filters.check({f.name: a[f.name] for f in L.filters}), sort=a["sort"] or ""
    )
    params = {"mode": req.mode, **{k: v for k, v in req.to_params().items() if k != "q"}}
    name = a["name"] or " · ".join(
        [a["q"], *(str(v) for k, v in req.filters.items())] + ([req.mode] if req.mode != "hybrid" else [])
    )
    r = _writer(request)
    sid = lib(request).readers.save_search(r, name, a["q"], params)  # the same search again keeps its id
    out = {"id": sid, "name": name, "query": a["q"], "params": params, "feed": _search_feed_url(request, r, sid)}
    if wants_json(request):
        return json_response(out)
    return RedirectResponse("/digest#searches", status_code=303)


async def delete_search(request: Request) -> Response:
    await check_write(request)
    r = _writer(request)
    lib(request).readers.delete_saved_search(r, request.path_params["search_id"])
    return done(request, {"deleted": request.path_params["search_id"]}, "/digest#searches")


# -- routes --------------------------------------------------------------------------------------
RECS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "reader": {"type": "string"},
        "method": {"type": "string"},
        "has_more": {"type": "boolean"},
        "likes": {"type": "integer"},
        "dislikes": {"type": "integer"},
        "choices": {"type": "integer"},
        "hits": {
            "type": "array",
            "items": {
                **HIT_SCHEMA,
                "properties": {
                    **HIT_SCHEMA["properties"],
                    "reason": {"type": "string", "description": "why it is recommended"},
                },
            },
        },
    },
}
PROFILE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "reader": {"type": "string"},
        "preferences": {"type": "string"},
        "interests": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "string"},
                    "label": {"type": "string"},
                    "phrases": {"type": "array"},
                    "added": {"type": "array"},
                    "muted": {"type": "array"},
                    "removed": {"type": "boolean"},
                    "papers": {"type": "integer"},
                    "examples": {"type": "array"},
                },
            },
        },
        "likes": {"type": "integer"},
        "dislikes": {"type": "integer"},
        "choices": {"type": "integer"},
    },
}

ENDPOINTS = [
    Endpoint(
        "/foryou",
        foryou,
        params=FORYOU_PARAMS,
        json_twin=True,
        tags=["recommend"],
        response=RECS_SCHEMA,
        summary="The current reader's recommendations, each with why (liked papers, matched phrases).",
    ),
    Endpoint(
        "/paper/{paper_id:path}/dismiss",
        dismiss,
        methods=("POST",),
        params=DISMISS_PARAMS,
        writes=True,
        tags=["recommend"],
        summary='Mark a paper "not interested" (or undo): fewer papers like it.',
    ),
    Endpoint(
        "/profile",
        profile,
        json_twin=True,
        tags=["recommend"],
        response=PROFILE_SCHEMA,
        summary="The reader's profile: interests as labelled key phrases with example papers.",
    ),
    Endpoint(
        "/profile/edit",
        edit_profile,
        methods=("POST",),
        params=EDIT_PARAMS,
        writes=True,
        tags=["recommend"],
        # one edit at least: a field that is not blank, or `preferences` (blank clears them)
        body_rules={
            "anyOf": [
                *({"required": [k], "properties": {k: {"pattern": r"\S"}}} for k in EDITS if k != "preferences"),
                {"required": ["preferences"]},
            ],
            # a phrase to remove and a new label name the interest they apply to
            "allOf": [
                {
                    "if": {"required": [k], "properties": {k: {"pattern": r"\S"}}},
                    "then": {"required": ["interest"], "properties": {"interest": {"pattern": r"\S"}}},
                }
                for k in ("remove_phrase", "rename")
            ],
        },
        summary="Edit the profile (remove / restore an interest, add / remove a phrase, rename, "
        "free-text preferences); answers the new profile and the re-ranked top recommendations.",
    ),
    Endpoint(
        "/triage",
        triage,
        params=TRIAGE_PARAMS,
        json_twin=True,
        tags=["recommend"],
        response={
            "type": "object",
            "properties": {
                "reader": {"type": "string"},
                "choices": {"type": "integer"},
                "pair": {"type": ["array", "null"], "items": PAPER_SCHEMA, "description": "[A, B] or null"},
            },
        },
        summary='The next "A or B?" pair, chosen to be informative (a dueling-bandit strategy).',
    ),
    Endpoint(
        "/triage",
        triage_choose,
        methods=("POST",),
        params=CHOOSE_PARAMS,
        writes=True,
        tags=["recommend"],
        summary="Answer a triage pair: winner over loser, neither (both rank lower), or skip (both marked seen).",
    ),
    Endpoint(
        "/group",
        group,
        params=GROUP_PARAMS,
        json_twin=True,
        tags=["recommend"],
        summary="A reading-group list fair to every member (Nash welfare), each member's share, "
        "and the same numbers for the sum-of-scores list.",
    ),
    Endpoint(
        "/digest",
        digest,
        params=DIGEST_PARAMS,
        json_twin=True,
        tags=["recommend"],
        media=("application/json", "text/markdown", "text/html", "application/atom+xml"),
        summary="Recommended papers the reader has not seen or judged; also as Markdown, HTML or Atom.",
    ),
    Endpoint(
        "/digest/seen",
        mark_seen,
        methods=("POST",),
        params=SEEN_PARAMS,
        writes=True,
        tags=["recommend"],
        summary="Mark papers as seen (they leave the digest and the feeds).",
    ),
    Endpoint(
        "/feeds/reader/{name:path}.atom",
        reader_feed,
        params=FEED_PARAMS,
        api_only=True,
        tags=["feeds"],
        media=("application/atom+xml",),
        response={"type": "string"},
        summary="Atom feed of a reader's unseen, unjudged recommendations.",
    ),
    Endpoint(
        "/feeds/search/{search_id:int}.atom",
        search_feed,
        params=FEED_PARAMS,
        api_only=True,
        media=("application/atom+xml",),
        tags=["feeds"],
        response={"type": "string"},
        summary="Atom feed of a saved search's results that its reader has not seen or judged.",
    ),
    Endpoint(
        "/searches",
        save_search,
        methods=("POST",),
        params=SAVE_PARAMS,
        filters="form",
        writes=True,
        tags=["feeds"],
        summary="Save a search for the current reader; answers its Atom feed address.",
    ),
    Endpoint(
        "/searches/{search_id:int}/delete",
        delete_search,
        methods=("POST",),
        writes=True,
        tags=["feeds"],
        summary="Delete one of the current reader's saved searches.",
    ),
]
