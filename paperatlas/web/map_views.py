"""The paper map in the web UI: /map (the page), /map.json (its data), /map/assets/* (its code).

The page is the same one `paperatlas map --out` writes, with assets and data served
instead of inlined. It carries its own Content-Security-Policy: regl (under
regl-scatterplot) compiles its draw calls with Function() and builds its point index
in a blob: worker, which the site-wide policy forbids.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import HTMLResponse, Response

from ..i18n import N_, gettext
from ..search.glossary import chinese_label, chinese_phrase
from ..topics.map import ASSETS, MAP_CSP, asset, render_map_html
from .common import (
    Endpoint,
    HTTPError,
    Param,
    json_response,
    language_links,
    lib,
    query,
    reader_name,
    ui_language,
    wants_json,
    web,
)

NAV = [(N_("Map"), "/map")]

MAP_PARAMS = [
    Param("venue", str, None, "only papers of this venue", max_length=200),
    Param("year", int, None, "only papers of this year"),
]


def _payload(request: Request, venue: str | None, year: int | None) -> dict[str, Any]:
    """map_data, cached until the topics are rebuilt or the papers change."""
    library = lib(request)
    key = ("map", library.topics.version(), library.programme.version(), venue, year)
    cache = web(request).cache
    if cache.get("map_key") != key:
        cache["map_data"] = library.topics.map_data(venue=venue, year=year)
        cache["map_key"] = key
    data = dict(cache["map_data"])
    reader = library.readers.find(reader_name(request))
    if reader is not None:
        pos = {pid: i for i, pid in enumerate(data["ids"])}
        data["saved"] = [pos[f.paper_id] for f in library.readers.feedback(reader, "like") if f.paper_id in pos]
    if ui_language(request) == "zh":
        data["topics"] = {level: [_in_chinese(t) for t in ts] for level, ts in data["topics"].items()}
    return data


def _in_chinese(topic: dict[str, Any]) -> dict[str, Any]:
    """A topic with its label and phrases in Chinese where the glossary knows them (the English kept in
    label_en / phrases_en): nothing is sent to a model to show a map."""
    t = dict(topic)
    t["label_en"], t["phrases_en"] = t.get("label", ""), list(t.get("phrases") or [])
    t["label"] = chinese_label(t["label_en"])
    t["phrases"] = [chinese_phrase(p) or p for p in t["phrases_en"]]
    return t


def map_page(request: Request) -> Response:
    a = query(request, MAP_PARAMS)
    if not lib(request).topics.status()["built"]:  # the map is not built yet: nothing there (404)
        raise HTTPError(
            404,
            gettext("this library has no topics yet, so there is no map"),
            gettext("run `paperatlas topics build`, then reload"),
        )
    if wants_json(request):
        return json_response(_payload(request, a["venue"], a["year"]))
    qs = request.url.query
    page = render_map_html(
        title=gettext("paperatlas map"),
        inline=False,
        asset_base="/map/assets/",
        data_url="/map.json" + (f"?{qs}" if qs else ""),
        paper_url="/paper/{id}",
        search_url="/search.json",
        home_url="/",
        nav=[(gettext(label), href) for label, href in web(request).nav],
        current="/map",
        languages=language_links(request),
        signed_in_as=None if web(request).read_only else reader_name(request),
    )
    return HTMLResponse(page, headers={"content-security-policy": MAP_CSP, "cache-control": "no-cache"})


def map_asset(request: Request) -> Response:
    name = request.path_params["name"]
    if name not in ASSETS:
        raise HTTPError(404, gettext("no map asset {name!r}", name=name), gettext("see /map"))
    body, ctype = asset(name)
    return Response(body, media_type=ctype, headers={"cache-control": "public, max-age=3600"})


MAP_RESPONSE: dict[str, Any] = {
    "type": "object",
    "description": "Column-oriented: entry i of ids, title, venue, year, url, authors, x, y, coarse, fine and "
    "phrases describes paper i; topics.coarse / topics.fine list the labelled topics.",
    "properties": {
        "ids": {"type": "array", "items": {"type": "string"}},
        "x": {"type": "array", "items": {"type": "number"}},
        "y": {"type": "array", "items": {"type": "number"}},
        "topics": {"type": "object"},
        "events": {
            "type": "object",
            "description": "paper index (as a string) -> [[type, session, when, place], ...]: where and when the "
            "programme presents it (the time in the conference's local time)",
            "additionalProperties": {"type": "array", "items": {"type": "array", "items": {"type": "string"}}},
        },
    },
}

ENDPOINTS = [
    Endpoint(
        "/map",
        map_page,
        params=MAP_PARAMS,
        json_twin=True,
        tags=["topics"],
        response=MAP_RESPONSE,
        summary="The paper map: every paper placed by meaning, coloured and labelled by topic.",
    ),
    Endpoint("/map/assets/{name}", map_asset, tags=["topics"], summary="Scripts and styles of the map page."),
]
