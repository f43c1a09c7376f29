"""The conference report in the web UI: /report (the page), /report.json (its figures, the same
`ConferenceReport.to_dict()` as `paperatlas report --json`), /report/export (the offline HTML file or
Markdown) and the page's two assets."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from .. import i18n
from ..errors import PaperatlasError
from ..i18n import N_, gettext
from ..report import ConferenceReport, parse_years
from ..report.render import asset, body_html, heading, render_html, render_markdown
from .common import (
    Endpoint,
    HTTPError,
    Param,
    author_url,
    json_response,
    lib,
    paper_url,
    query,
    render,
    ui_language,
    wants_json,
    web,
)

NAV = [(N_("Report"), "/report")]
_YEAR = "(?:19[5-9][0-9]|20[0-9][0-9]|2100)"
# what parse_years takes, stated in the API document: years 1950-2100, ranges either way round
YEARS_PATTERN = f"^ *{_YEAR}(?: *- *{_YEAR})?(?: *, *{_YEAR}(?: *- *{_YEAR})?)* *$"

REPORT_PARAMS = [
    Param("venue", str, None, "the venue (case-insensitive); without it, every venue of the library", max_length=200),
    Param(
        "year",
        str,
        None,
        "a year, a range or a list: 2023, 2019-2025, 2021,2023 (several years add trends); 1950-2100",
        max_length=100,
        pattern=YEARS_PATTERN,
    ),
]
EXPORT_PARAMS = [
    *REPORT_PARAMS,
    Param("format", str, "html", "html (one offline file) or markdown", choices=("html", "markdown")),
]


def _report(request: Request, venue: str | None, year: str | None) -> ConferenceReport:
    """The report, cached until the papers change or the topics are rebuilt."""
    library = lib(request)
    try:
        years = parse_years(year)
    except PaperatlasError as e:
        raise HTTPError(400, e.message, e.fix) from None
    try:
        key = (
            "report",
            venue and venue.lower(),
            tuple(years),
            library.report.version(),
        )
        cache = web(request).cache
        if cache.get("report_key") != key:
            cache["report"] = library.report.build(venue, years)
            cache["report_key"] = key
    except PaperatlasError as e:
        raise HTTPError(404, e.message, e.fix) from None  # no such papers, or no topics yet
    return cache["report"]  # type: ignore[no-any-return]


def _venues(request: Request) -> list[dict[str, Any]]:
    """The venue-year groups, for the chooser at the top of the page."""
    groups: dict[str, dict[str, Any]] = {}
    for v in lib(request).stats()["venues"]:
        g = groups.setdefault(v["venue"] or "", {"venue": v["venue"] or "", "years": [], "papers": 0})
        if v["year"]:
            g["years"].append(v["year"])
        g["papers"] += v["papers"]
    for g in groups.values():
        g["years"] = sorted(set(g["years"]))
    return sorted(groups.values(), key=lambda g: -g["papers"])


def _body(request: Request, rep: ConferenceReport, lang: str) -> str:
    """The report's body, rendered once per built report and language: it names every paper in scope
    (24 MB of HTML at 100k papers, seconds to render) and holds nothing of the request or the reader."""
    w = web(request)
    held: tuple[ConferenceReport, dict[tuple[str, str], str]] | None = w.cache.get("report_bodies")
    if not held or held[0] is not rep:  # a rebuilt report (the papers or topics changed): render anew
        held = (rep, {})
        w.cache["report_bodies"] = held
    key = (lang, str(w.asset_version))
    if key not in held[1]:
        held[1][key] = body_html(rep, lang, paper_href=paper_url, author_href=author_url, v=w.asset_version)
    return held[1][key]


def report_page(request: Request) -> Response:
    a = query(request, REPORT_PARAMS)
    rep = _report(request, a["venue"], a["year"])
    if wants_json(request):
        return json_response(rep.to_dict())
    lang = ui_language(request)
    i18n.set_language(lang)
    body = _body(request, rep, lang)
    qs = request.url.query
    venues = _venues(request)
    years = sorted({y for g in venues for y in g["years"]})
    return render(
        request,
        "report.html",
        a=a,
        body=body,
        title=heading(rep),
        venues=venues,
        # an example from the library's own years, never years it does not hold
        years_hint="" if not years else str(years[0]) if len(years) == 1 else f"{years[0]}-{years[-1]}",
        export_qs=("?" + qs + "&") if qs else "?",
    )


def report_export(request: Request) -> Response:
    a = query(request, EXPORT_PARAMS)
    rep = _report(request, a["venue"], a["year"])
    lang = ui_language(request)
    with i18n.language(lang):
        if a["format"] == "markdown":
            text, ctype, ext = render_markdown(rep, lang), "text/markdown; charset=utf-8", "md"
        else:
            text, ctype, ext = render_html(rep, lang), "text/html; charset=utf-8", "html"
    name = "-".join(
        str(x)
        for x in (
            "report",
            rep.scope.get("venue") or "library",
            *(rep.scope.get("years_present") or [])[:1],
            *(rep.scope.get("years_present") or [])[-1:],
        )
        if x
    ).replace(" ", "_")
    return Response(text, media_type=ctype, headers={"content-disposition": f'attachment; filename="{name}.{ext}"'})


def report_asset(request: Request) -> Response:
    name = request.path_params["name"]
    try:
        body = asset(name)
    except KeyError:
        raise HTTPError(404, gettext("no report asset {name!r}", name=name), gettext("see /report")) from None
    ctype = "text/css" if name.endswith(".css") else "text/javascript"
    return Response(body, media_type=f"{ctype}; charset=utf-8", headers={"cache-control": "public, max-age=3600"})


REPORT_RESPONSE: dict[str, Any] = {
    "type": "object",
    "description": "The figures of `paperatlas report --json`: every count carries the ids of its papers.",
    "properties": {
        "scope": {"type": "object"},
        "papers": {"type": "integer"},
        "placed": {"type": "integer"},
        "types": {"type": "object"},
        "type_ids": {"type": "object"},
        "themes": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "topic": {"type": "integer"},
                    "label": {"type": "string"},
                    "papers": {"type": "integer"},
                    "share": {"type": "number"},
                    "ids": {"type": "array", "items": {"type": "string"}},
                    "types": {"type": "object"},
                },
            },
        },
        "institutions": {"type": "array", "items": {"type": "object"}},
        "countries": {"type": "array", "items": {"type": "object"}},
        "collaboration": {"type": "object"},
        "authors": {"type": "array", "items": {"type": "object"}},
        "reviews": {"type": "object"},
        "trends": {"type": "object", "description": "only over two years or more"},
        "notes": {"type": "array", "items": {"type": "string"}},
        "titles": {"type": "object"},
    },
}

ENDPOINTS = [
    Endpoint(
        "/report/export",
        report_export,
        params=EXPORT_PARAMS,
        tags=["report"],
        media=("text/html", "text/markdown"),
        summary="The report as one offline HTML file (loads nothing from the network) or Markdown.",
    ),
    Endpoint(
        "/report/{name}",
        report_asset,
        tags=["report"],
        summary="The report page's stylesheet and script.",
        params=[Param("name", str, None, "report.css or report.js", where="path")],
        media=("text/css",),
    ),
    Endpoint(
        "/report",
        report_page,
        params=REPORT_PARAMS,
        json_twin=True,
        tags=["report"],
        summary="A conference at a glance: themes, trends over years, institutions, countries, reviews.",
        response=REPORT_RESPONSE,
    ),
]
