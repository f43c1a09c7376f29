"""The conference programme in the web UI: /programme (days -> sessions), /session/{id} (its posters
in number order, your likes and recommendations marked, a planned walk with done/skip buttons),
/agenda (your conference; its calendar at /feeds/agenda/{name}.ics?key=...). Every page has a
.json twin. A service worker (/programme-sw.js) keeps the pages you opened readable without a network.
"""

from __future__ import annotations

import functools

from pathlib import Path
from types import SimpleNamespace
from typing import Any
from urllib.parse import quote

from starlette.requests import Request
from starlette.responses import Response

from ..errors import NotFound
from ..i18n import N_, gettext
from . import auth
from .common import (
    Endpoint,
    Param,
    current_reader,
    is_owner_request,
    json_response,
    lib,
    query,
    render,
    wants_json,
)

NAV = [(N_("Programme"), "/programme")]
HERE = Path(__file__).resolve().parent
TYPES = ("oral", "spotlight", "poster")


@functools.cache
def _zone_names() -> str:
    """The IANA names this machine knows, as the pattern the API document states (the view checks
    the name itself, with an error that gives examples, rather than listing ~600 names)."""
    from zoneinfo import available_timezones

    names = sorted(available_timezones())
    return "^(?:" + "|".join(n.replace("+", "[+]") for n in names) + ")$"


TZ = Param(
    "tz",
    str,
    None,
    "show times in this IANA timezone (default: the conference's own), e.g. Asia/Shanghai",
    max_length=64,
    pattern=_zone_names,
)
DAY = Param("day", str, None, "only this local date, YYYY-MM-DD", max_length=10)
PROGRAMME_PARAMS = [
    Param("feed", str, None, "only this programme, e.g. 'neurips 2025'", max_length=100),
    DAY,
    Param("type", str, None, "only sessions of this type", choices=TYPES),
    TZ,
]
WALK_PARAMS = [
    Param("minutes", int, 90, "the time you have for the session", minimum=1, maximum=1440),
    Param("per_poster", int, 5, "minutes at each poster", minimum=1, maximum=240),
    Param("walk", int, 1, "minutes to walk past 100 poster numbers", minimum=0, maximum=120),
    Param(
        "done", str, "", "comma-separated papers already visited (the walk continues from the last)", max_length=4000
    ),
    Param("skip", str, "", "comma-separated papers to leave out", max_length=4000),
]
AGENDA_PARAMS = [
    DAY,
    TZ,
    Param("session", str, None, "only this session (its id)", max_length=200),
    Param(
        "recommended", int, 20, "strongest recommendations added to the liked and tagged papers", minimum=0, maximum=200
    ),
]
ICS_PARAMS = [Param("key", str, None, "the calendar's key, as in the URL the Agenda page gives", max_length=64)]

EVENT_SCHEMA = {
    "type": "object",
    "properties": {
        k: {"type": "string"}
        for k in (
            "session",
            "start",
            "end",
            "timezone",
            "room",
            "poster_position",
            "type",
            "event_id",
            "session_id",
            "feed",
            "url",
        )
    },
}
SESSION_SCHEMA = {
    "type": "object",
    "properties": {
        "session_id": {"type": "string"},
        "session": {"type": "string"},
        "feed": {"type": "string"},
        "type": {"type": "string"},
        "start": {"type": "string"},
        "end": {"type": "string"},
        "day": {"type": "string"},
        "rooms": {"type": "array", "items": {"type": "string"}},
        "events": {"type": "integer"},
    },
}


def _ids(text: str) -> list[str]:
    return [x.strip() for x in (text or "").split(",") if x.strip()]


def _days(sessions: list[Any]) -> list[tuple[str, list[Any]]]:
    out: dict[str, list[Any]] = {}
    for s in sessions:
        out.setdefault(s.day, []).append(s)
    return list(out.items())


def programme_page(request: Request) -> Response:
    a = query(request, PROGRAMME_PARAMS)
    sessions = lib(request).programme.sessions(a["feed"], a["day"], a["type"], a["tz"])
    if wants_json(request):
        return json_response(
            {"sessions": [s.to_dict() for s in sessions], "days": sorted({s.day for s in sessions if s.day})}
        )
    return render(
        request, "programme.html", days=_days(sessions), a=a, feeds=lib(request).programme.feeds(), types=TYPES
    )


def session_page(request: Request) -> Response:
    sid = request.path_params["session_id"]
    a = query(request, WALK_PARAMS)
    L = lib(request)
    info, events = L.programme.session(sid)
    r = current_reader(request)
    interest: dict[str, tuple[float, bool]] = {}
    walk = None
    if r is not None:
        interest = L.programme.interest(r.name, [e.paper_id for e in events if e.paper_id])
        if any(must for _, must in interest.values()) or any(v > 0 for v, _ in interest.values()):
            walk = L.programme.walk(
                sid, r.name, a["minutes"], a["per_poster"], a["walk"], _ids(a["done"]), _ids(a["skip"])
            )
    rows = []
    for e in events:
        v, must = interest.get(e.paper_id, (0.0, False))
        rows.append(
            {
                **e.to_dict(),
                "paper_id": e.paper_id,
                "title": e.name,
                "liked": must,
                "recommended": (not must) and v >= 0.5,
                "interest": round(v, 4),
            }
        )
    if wants_json(request):
        return json_response({**info.to_dict(), "events": rows, "walk": walk.to_dict() if walk else None})
    stops = {s.poster.paper_id: k for k, s in enumerate(walk.stops, start=1)} if walk else {}
    return render(
        request,
        "session.html",
        info=info,
        rows=rows,
        walk=walk,
        stops=stops,
        a=a,
        done=_ids(a["done"]),
        skipped=_ids(a["skip"]),
        signed=r is not None,
    )


def agenda_page(request: Request) -> Response:
    a = query(request, AGENDA_PARAMS)
    L = lib(request)
    r = current_reader(request)
    if r is None and is_owner_request(request):
        # the owner on this machine before their first star: the header says "reader me", so the page
        # is me's agenda, empty yet, never a request to sign in
        empty: dict[str, Any] = {
            "reader": auth.OWNER,
            "timezone": a["tz"] or "",
            "sessions": [],
            "clashes": [],
            "unscheduled": [],
        }
        if wants_json(request):
            counts = {"sessions": 0, "items": 0, "clashes": 0, "unscheduled": 0}
            return json_response({**empty, "counts": counts, "notes": [], "ics_url": ""})
        return render(request, "agenda.html", agenda=SimpleNamespace(**empty), a=a, ics_url="", people=[])
    if r is None:
        if wants_json(request):
            raise NotFound(
                gettext("no reader: sign in to see your agenda"),
                gettext("sign in on /signin; scripts send `Authorization: Bearer TOKEN`"),
            )
        return render(request, "agenda.html", agenda=None, a=a, ics_url="", people=[])
    agenda = L.programme.agenda(r.name, a["tz"], a["day"], a["session"], recommended=a["recommended"])
    key = auth.feed_key(L, "agenda", r)
    ics_url = f"/feeds/agenda/{quote(r.name, safe='')}.ics?key={key}"
    if wants_json(request):
        return json_response({**agenda.to_dict(), "ics_url": ics_url})
    from ..programme.groups import people

    items = sorted(agenda.items, key=lambda i: (not i.must_see, -i.score))
    met = people([(i.paper_id, i.title, i.score, i.event) for i in items], 12)
    return render(request, "agenda.html", agenda=agenda, a=a, ics_url=ics_url, people=met)


def agenda_ics(request: Request) -> Response:
    a = query(request, ICS_PARAMS)
    L = lib(request)
    name = request.path_params["name"]
    r = L.readers.find(name)  # a calendar URL never creates a reader
    # one answer for "no such reader" and "wrong key": the URL reveals nothing without its key
    if r is None or not auth.check_feed_key(L, "agenda", r, a["key"] or ""):
        raise NotFound(
            gettext("no calendar for reader {name!r} with this key", name=name),
            gettext("copy the calendar's URL, key included, from the reader's Agenda page"),
        )
    site = f"{request.url.scheme}://{request.url.netloc}"
    return Response(
        L.programme.ics(r.name, base_url=site),
        media_type="text/calendar; charset=utf-8",
        headers={"cache-control": "no-cache"},
    )


def service_worker(request: Request) -> Response:
    body = (HERE / "static" / "programme-sw.js").read_bytes()
    # the worker controls the whole site (its scope is "/"), and is fetched fresh so an update lands
    return Response(body, media_type="text/javascript", headers={"cache-control": "no-cache"})


ENDPOINTS = [
    Endpoint(
        "/programme",
        programme_page,
        params=PROGRAMME_PARAMS,
        json_twin=True,
        tags=["programme"],
        summary="The conference programme: its sessions, day by day.",
        response={
            "type": "object",
            "properties": {
                "sessions": {"type": "array", "items": SESSION_SCHEMA},
                "days": {"type": "array", "items": {"type": "string"}},
            },
        },
    ),
    Endpoint(
        "/session/{session_id}",
        session_page,
        params=WALK_PARAMS,
        json_twin=True,
        tags=["programme"],
        summary="One session's papers in poster-number order, your likes and recommendations marked, and a "
        "planned walk for your time.",
        response={
            "type": "object",
            "properties": {
                **SESSION_SCHEMA["properties"],
                "events": {"type": "array", "items": EVENT_SCHEMA},
                "walk": {"type": ["object", "null"]},
            },
        },
    ),
    Endpoint(
        "/agenda",
        agenda_page,
        params=AGENDA_PARAMS,
        json_twin=True,
        tags=["programme"],
        summary="Your agenda: liked, tagged and recommended papers by day, session and poster number, "
        "with the clashes.",
        response={
            "type": "object",
            "properties": {
                "reader": {"type": "string"},
                "sessions": {"type": "array"},
                "clashes": {"type": "array"},
                "unscheduled": {"type": "array"},
                "ics_url": {"type": "string"},
            },
        },
    ),
    Endpoint(
        "/feeds/agenda/{name:path}.ics",
        agenda_ics,
        params=ICS_PARAMS,
        api_only=True,
        tags=["programme"],
        summary="A reader's agenda as an iCalendar subscription (the key comes from the Agenda page).",
        media=("text/calendar",),
    ),
    Endpoint(
        "/programme-sw.js",
        service_worker,
        tags=["programme"],
        summary="The service worker that keeps opened programme pages readable offline.",
        media=("text/javascript",),
    ),
]
