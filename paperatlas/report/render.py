"""A report as Markdown, as one self-contained HTML file, and as the HTML fragment of the web page.

Headings and notes follow the language (English or Chinese); in Chinese a theme label's phrases read
in Chinese where the glossary knows them (search/glossary.py); names and titles stay as the papers
write them. The HTML loads nothing: its charts are inline SVG, its style inline CSS.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader
from markupsafe import Markup

from .. import i18n
from ..i18n import gettext
from ..search.glossary import chinese_label
from .charts import Bar, Series, hbars, legend, lines
from .figures import ConferenceReport

TEMPLATES = Path(__file__).parent / "templates"
TYPE_NAMES = {
    "oral": i18n.N_("oral"),
    "spotlight": i18n.N_("spotlight"),
    "poster": i18n.N_("poster"),
    "highlight": i18n.N_("highlight"),
    "unknown": i18n.N_("type unknown"),
}
TREND_LINES = 6  # themes drawn in the trend chart: the fastest rising and fading ones


def report_dict(rep: ConferenceReport, lang: str) -> dict[str, Any]:
    """The report's dict as a page in `lang` shows it: in Chinese, each theme's label through the
    glossary (the English kept in label_en); nothing is sent to a model to render a report."""
    r = rep.to_dict()
    if lang == "zh":  # copies: the dict shares its lists with the report, which a server caches

        def zh(themes: list[dict[str, Any]]) -> list[dict[str, Any]]:
            return [{**t, "label_en": t["label"], "label": chinese_label(t["label"])} for t in themes]

        r = {**r, "themes": zh(r["themes"])}
        if r.get("trends"):
            r["trends"] = {**r["trends"], "themes": zh(r["trends"]["themes"])}
    return r


def pct(x: float | None) -> str:
    return "–" if x is None else f"{x * 100:.1f}%"


def signed_pp(x: float) -> str:
    """A change of share in percentage points: +3.2 pp."""
    return f"{x * 100:+.1f} pp"


def _span(ys: list[int]) -> str:
    return "" if not ys else str(ys[0]) if len(ys) == 1 else f"{ys[0]}–{ys[-1]}"


def heading(rep: ConferenceReport) -> str:
    """The report's title from the venues and years its papers have: `NeurIPS 2023–2024: the conference
    at a glance`, `ICLR 2026, NeurIPS 2026: the papers at a glance` for a library of a few venues."""
    venue = rep.scope.get("venue") or ""
    present: dict[str, list[int]] = rep.scope.get("venues_present") or {}
    if not venue and len(present) == 1:
        venue = next(iter(present))
    if venue:
        what = " ".join(x for x in (venue, _span(rep.scope.get("years_present") or [])) if x)
        return gettext("{what}: the conference at a glance", what=what)
    if 2 <= len(present) <= 3:
        what = ", ".join(" ".join(x for x in (v, _span(ys)) if x) for v, ys in present.items())
        return gettext("{what}: the papers at a glance", what=what)
    return gettext("The library at a glance")


def _env() -> Environment:
    env = Environment(loader=FileSystemLoader(str(TEMPLATES)), autoescape=True)
    env.globals["_"] = lambda message, **params: Markup.escape(i18n.translate(message)).format(**params)
    env.globals["in_language"] = i18n.in_language
    env.globals["ngettext"] = lambda singular, plural, n, **params: Markup.escape(
        i18n.translate_plural(singular, plural, n)
    ).format(n=n, **params)
    return env


def _types_of(r: dict[str, Any]) -> dict[str, str]:
    return {pid: t for t, ids in r["type_ids"].items() for pid in ids}


def charts(r: dict[str, Any]) -> dict[str, Markup]:
    """The SVG charts of a report dict, each bar and point a link to its papers' list."""
    theme_bars = []
    for t in r["themes"]:
        c = t["types"]
        known = c.get("oral", 0) + c.get("spotlight", 0) + c.get("poster", 0)
        parts = (
            (c.get("oral", 0), "oral"),
            (c.get("spotlight", 0), "spotlight"),
            (c.get("poster", 0), "poster"),
            (t["papers"] - known, "other"),
        )
        theme_bars.append(
            Bar(t["label"], t["papers"], f"#theme-{t['topic']}", f"{t['papers']} · {pct(t['share'])}", parts)
        )
    out = {"themes": hbars(theme_bars, gettext("Themes"))}
    out["institutions"] = hbars(
        [
            Bar(x["name"], x["papers"], f"#inst-{i}", f"{x['papers']} · {pct(x['share'])}")
            for i, x in enumerate(r["institutions"][:20])
        ],
        gettext("Institutions"),
        label_w=250,
    )
    out["countries"] = hbars(
        [
            Bar(x["name"], x["papers"], f"#country-{i}", f"{x['papers']} · {pct(x['share'])}")
            for i, x in enumerate(r["countries"][:20])
        ],
        gettext("Countries"),
        label_w=160,
    )
    hist = r["reviews"].get("histogram") or []
    out["ratings"] = hbars(
        [Bar(f"{b['from']}–{b['to']}", b["papers"], f"#rating-{b['from']}", str(b["papers"])) for b in hist],
        gettext("Reviews"),
        label_w=80,
    )
    tr = r.get("trends")
    if tr:
        by = {t["topic"]: t for t in tr["themes"]}
        chosen = list(dict.fromkeys(tr["rising"][: TREND_LINES // 2] + tr["fading"][: TREND_LINES // 2]))
        years = [str(y) for y in tr["years"]]
        series = [
            Series(
                by[k]["label"],
                [by[k]["shares"][y] for y in years],
                [f"#theme-{k}-{y}" if by[k]["counts"][y] else f"#theme-{k}" for y in years],
                [f"{pct(by[k]['shares'][y])} ({by[k]['counts'][y]})" for y in years],
            )
            for k in chosen
        ]
        out["trends"] = lines(years, series, gettext("Trends"))
        out["trends_legend"] = legend(series)
    return out


def asset(name: str) -> str:
    """report.css or report.js: inlined in the offline file, served by the web page."""
    if name not in ("report.css", "report.js"):
        raise KeyError(name)
    return (TEMPLATES / name).read_text(encoding="utf-8")


def body_html(
    rep: ConferenceReport,
    lang: str = "en",
    paper_href: Callable[[str], str] | None = None,
    author_href: Callable[[str], str] | None = None,
    offline: bool = False,
    v: str = "",
) -> Markup:
    """The report's HTML (no <html> around it): the web page and the offline file both show this.
    Offline, its script is inline; on the web it is /report/report.js (the site allows no inline script)."""
    r = report_dict(rep, lang)
    types_of = _types_of(r)
    theme_years: dict[int, list[tuple[str | None, list[str]]]] = {}
    for t in r["themes"]:
        by_year = t.get("ids_by_year")
        theme_years[t["topic"]] = [(y, ids) for y, ids in by_year.items() if ids] if by_year else [(None, t["ids"])]
    ys = r["scope"].get("years_present") or []
    html = (
        _env()
        .get_template("body.html")
        .render(
            r=r,
            lang=lang,
            heading=heading(rep),
            charts=charts(r),
            pct=pct,
            signed_pp=signed_pp,
            years_label=", ".join(map(str, ys)) if len(ys) <= 3 else f"{ys[0]}–{ys[-1]}",
            type_names={k: i18n.translate(v) for k, v in TYPE_NAMES.items()},
            trend_by_topic={t["topic"]: t for t in (r.get("trends") or {}).get("themes", [])},
            theme_years=theme_years,
            types_of=types_of,
            type_ids=r["type_ids"],
            rating_bins=r["reviews"].get("histogram") or [],
            paper_href=paper_href or (lambda pid: ""),
            author_href=author_href or (lambda name: ""),
            inline_script=Markup(asset("report.js")) if offline else "",
            offline=offline,
            v=v,
        )
    )
    return Markup(html)


def render_html(rep: ConferenceReport, lang: str = "en") -> str:
    """One self-contained HTML file: inline CSS and SVG, no external address loaded."""
    css = Markup(asset("report.css"))
    body = body_html(rep, lang, offline=True)
    return (
        _env()
        .get_template("standalone.html")
        .render(html_lang=i18n.html_lang(lang), heading=heading(rep), css=css, body=body)
    )


def render_markdown(rep: ConferenceReport, lang: str = "en") -> str:
    """The report as Markdown: the same figures as the HTML, in tables."""
    r = report_dict(rep, lang)
    names = {k: i18n.translate(v) for k, v in TYPE_NAMES.items()}
    out = [f"# {heading(rep)}", ""]
    types = ", ".join(f"{names[t]} {n}" for t, n in r["types"].items())
    out.append(i18n.ngettext("{n} paper", "{n} papers", r["papers"]) + (f" · {types}" if types else ""))
    out.append("")
    for note in r["notes"]:
        out += [f"> {i18n.in_language(note)}", ""]
    if r["scope"].get("themes_missing"):
        out += [
            f"## {gettext('Themes')}",
            "",
            gettext("Not in this report: the library's themes were not built yet."),
            "",
        ]
    header = (
        f"| # | {gettext('theme')} | {gettext('papers')} | {gettext('share')} "
        f"| {gettext('orals and spotlights')} | {gettext('mean rating')} |"
    )
    if r["themes"]:
        out += [f"## {gettext('Themes')}", "", header, "|---|---|---|---|---|---|"]
    for t in r["themes"]:
        c = t["types"]
        hi = c.get("oral", 0) + c.get("spotlight", 0) + c.get("highlight", 0)
        rating = t["reviews"]["rating_avg"]
        out.append(
            f"| {t['topic']} | {t['label']} | {t['papers']} | {pct(t['share'])} | {hi} "
            f"| {'' if rating is None else rating} |"
        )
    out.append("")
    for t in r["themes"]:
        d = t.get("description")
        written = (t.get("summary") or {}).get(lang)
        if written:
            cites = "; ".join(f"{r['titles'].get(i, i)}, `{i}`" for i in written["cites"])
            line = f"- **{written['label']}** ({t['label']})"
            if written["text"]:
                line += f": {written['text']}" + (f" ({cites})" if cites else "")
            out += [line + " — " + gettext("written by {model} from these papers", model=written["model"])]
        elif d:
            title = r["titles"].get(d["id"], d["id"])
            out += [f"- **{t['label']}**: {d['text']} ({title}, `{d['id']}`)"]
    out.append("")
    tr = r.get("trends")
    if tr:
        years = [str(y) for y in tr["years"]]
        out += [
            f"## {gettext('Trends')}",
            "",
            gettext(
                "Each theme's share of its year's papers. A change counts as "
                "real when the trend test over all years gives q < 0.05 after correcting for the number of themes "
                "tested."
            ),
            "",
            f"| {gettext('theme')} | " + " | ".join(years) + f" | {gettext('change')} | z | q |",
            "|---|" + "---|" * (len(years) + 3),
        ]
        by = {t["topic"]: t for t in tr["themes"]}
        for k in list(dict.fromkeys(tr["rising"] + tr["fading"])):
            t = by[k]
            cells = " | ".join(f"{pct(t['shares'][y])} ({t['counts'][y]})" for y in years)
            out.append(
                f"| {t['label']} | {cells} | {signed_pp(t['change'])} | {t['z']} | {t['q']:.3g}"
                f"{' ✓' if t['significant'] else ''} |"
            )
        if tr["new"]:
            out += [
                "",
                gettext("New themes (under a tenth of their papers before {year}):", year=years[-1])
                + " "
                + "; ".join(by[k]["label"] for k in tr["new"]),
            ]
        out.append("")
    if r["institutions"]:
        out += [
            f"## {gettext('Institutions and countries')}",
            "",
            gettext(
                "Papers with at least one author there, of the {n} papers whose affiliations are known.",
                n=r["scope"]["with_affiliations"],
            ),
            "",
            f"| {gettext('Institutions')} | {gettext('papers')} | {gettext('share')} |",
            "|---|---|---|",
        ]
        out += [f"| {x['name']} | {x['papers']} | {pct(x['share'])} |" for x in r["institutions"][:20]]
        out += ["", f"| {gettext('Countries')} | {gettext('papers')} | {gettext('share')} |", "|---|---|---|"]
        out += [f"| {x['name']} | {x['papers']} | {pct(x['share'])} |" for x in r["countries"][:20]]
        col = r["collaboration"]
        out += [
            "",
            gettext(
                "{n} papers ({share}) have authors in more than one country.",
                n=col["multi_country_papers"],
                share=pct(col["multi_country_share"]),
            ),
            "",
        ]
    if r["reviews"]["papers"]:
        rv = r["reviews"]
        out += [
            f"## {gettext('Reviews')}",
            "",
            gettext(
                "{n} papers with public review scores: mean rating {avg}, spread (standard deviation) {std}.",
                n=rv["papers"],
                avg=rv["rating_avg"],
                std=rv["rating_std"],
            ),
            "",
        ]
        out += [f"- {names.get(t, t)}: {v['rating_avg']} ({v['papers']})" for t, v in rv["by_type"].items()]
        out.append("")
    if r["authors"]:  # a list without author lines has none to name
        out += [f"## {gettext('Most prolific authors')}", ""]
        out += [f"{i}. {a['name']} ({a['papers']})" for i, a in enumerate(r["authors"], start=1)]
    if r.get("cited"):
        out += ["", f"## {gettext('Most cited papers')}", ""]
        out += [
            f"{i}. {rep.titles.get(c['id'], c['id'])} — "
            + gettext("cited {n} times, {recent} this year and last", n=c["cited_by_count"], recent=c["recent"])
            for i, c in enumerate(r["cited"], start=1)
        ]
    if r.get("cited_themes"):
        out += ["", f"## {gettext('Themes rising fastest by citations')}", ""]
        out += [
            f"{i}. {t['label']} — "
            + gettext(
                "{velocity} citations per paper this year and last ({papers} papers with counts)",
                velocity=t["velocity"],
                papers=t["papers"],
            )
            for i, t in enumerate(r["cited_themes"], start=1)
        ]
    return "\n".join(out).rstrip("\n") + "\n"
