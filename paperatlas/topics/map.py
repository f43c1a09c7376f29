"""The interactive paper map: a JSON payload and one HTML page that draws it.

`render_map_html(lib.topics.map_data())` returns a single self-contained page (the vendored
regl-scatterplot bundle, the map code, the styles and the data all inline) that opens
offline from disk, like Mini-Conf's static site. The web app serves the same page with
`inline=False`: the assets come from `asset_base` and the data from `data_url`.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader
from markupsafe import Markup

from .. import i18n
from ..i18n import N_, gettext

STATIC = Path(__file__).resolve().parent / "static"
# name -> (file under static/, content type); what the web app may serve from here
ASSETS = {
    "regl-scatterplot.min.js": ("vendor/regl-scatterplot.min.js", "text/javascript; charset=utf-8"),
    "atlas.js": ("atlas.js", "text/javascript; charset=utf-8"),
    "atlas.css": ("atlas.css", "text/css; charset=utf-8"),
    "THIRD_PARTY_LICENSES.txt": ("vendor/THIRD_PARTY_LICENSES.txt", "text/plain; charset=utf-8"),
}
# regl compiles its draw calls with Function(), and regl-scatterplot builds its spatial
# index in a blob: worker; everything else stays same-origin
MAP_CSP = (
    "default-src 'self'; script-src 'self' 'unsafe-eval'; worker-src 'self' blob:; style-src 'self'; "
    "img-src 'self' data: blob:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)


# Strings that atlas.js shows; the page embeds their translations (atlas.html has its own `_()`).
MAP_MESSAGES = (
    N_("This library has no papers on the map yet."),
    N_("The plotting library did not load."),
    N_("This browser cannot draw the map (WebGL is unavailable): {error}"),
    N_("Close"),
    N_("Topic: {label}"),
    N_("Subtopic: {label}"),
    N_("Open paper"),
    N_("{n} papers selected"),
    N_("Key phrases of the selection"),
    N_("\u2026 and {n} more"),
    N_("1 match"),
    N_("{n} matches"),
    N_("{n} search results"),
    N_("{n} saved"),
    N_("Could not load the map: {error}"),
    N_("No papers on the map match. Try other words."),
    N_("1 matching paper"),
    N_("{n} matching papers"),
    N_("No good matches"),
    N_("oral"),
    N_("spotlight"),
    N_("poster"),
    N_("at the conference"),
)


def _page_env() -> Environment:
    env = Environment(loader=FileSystemLoader(str(STATIC)), autoescape=True)
    env.globals["_"] = lambda message, **params: Markup.escape(i18n.translate(message)).format(**params)
    return env


def asset(name: str) -> tuple[bytes, str]:
    """(bytes, content type) of a map asset, for a web route. Raises KeyError for other names."""
    rel, ctype = ASSETS[name]
    return (STATIC / rel).read_bytes(), ctype


_SCRIPTS = "<!--paperatlas-scripts-->"  # where the scripts go (the template's last placeholder)


def _script_json(data: Any) -> str:
    """JSON that is safe inside a <script> element (no "</script>", no "<!--")."""
    s = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return s.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def render_map_html(
    data: dict[str, Any] | None = None,
    title: str = "paperatlas map",
    inline: bool = True,
    asset_base: str = "/map/assets/",
    data_url: str = "/map.json",
    paper_url: str = "",
    search_url: str = "",
    home_url: str = "",
    nav: list[tuple[str, str]] | None = None,
    current: str = "",
    languages: list[dict[str, Any]] | None = None,
    signed_in_as: str | None = None,
) -> str:
    """The map page.

    Args:
        data: what to draw (`lib.topics.map_data()`); needed by inline pages only.
        title: the page title.
        inline: True: one self-contained file (assets and data inline, works offline from
            disk); False: a page that loads the assets from `asset_base` and the data from
            `data_url` (what the web app serves).
        paper_url: link for a clicked paper, "{id}" replaced by its id (default: its own url).
        search_url: a search API ("/search.json") whose hits the search box highlights; by
            default the box matches titles, authors and key phrases in the page itself.
        home_url: make the title a link to this page (the web app's home).
        nav: the site's navigation as (label, href) pairs, drawn above the map (the web app);
            `current` is the href marked as the current page.
        languages: the site's language switch (dicts with name, tag, url, current), drawn with `nav`.
        signed_in_as: the reader the page speaks for, drawn with `nav` ("": nobody, a sign-in link;
            None: no reader indicator, as in the offline file).

    Example:
        >>> Path("atlas.html").write_text(render_map_html(lib.topics.map_data()), encoding="utf-8")  # doctest: +SKIP
    """
    attrs = {"data-paper-url": paper_url, "data-search-url": search_url}
    if inline:
        if data is None:
            raise ValueError("an inline map needs its data: pass lib.topics.map_data()")
        css = (STATIC / "atlas.css").read_text(encoding="utf-8")
        vendor = (STATIC / "vendor" / "regl-scatterplot.min.js").read_text(encoding="utf-8")
        app = (STATIC / "atlas.js").read_text(encoding="utf-8")
        head = f"<style>\n{css}\n</style>"
        tail = (
            f'<script id="atlas-data" type="application/json">{_script_json(data)}</script>\n'
            f"<script>\n{_no_close(vendor)}\n</script>\n<script>\n{_no_close(app)}\n</script>"
        )
    else:
        base = html.escape(asset_base, quote=True)
        attrs["data-src"] = data_url
        head = f'<link rel="stylesheet" href="{base}atlas.css">'
        tail = f'<script src="{base}regl-scatterplot.min.js"></script>\n<script src="{base}atlas.js"></script>'
    attr_html = " ".join(f'{k}="{html.escape(v, quote=True)}"' for k, v in attrs.items() if v)
    title_html = html.escape(title)
    if home_url:
        title_html = f'<a href="{html.escape(home_url, quote=True)}">{title_html}</a>'
    lang = i18n.current()  # the request's language in the web app; `paperatlas map --lang` on the CLI
    strings = {m: gettext(m) for m in MAP_MESSAGES} if lang != i18n.DEFAULT else {}
    page = (
        _page_env()
        .get_template("atlas.html")
        .render(
            TITLE=title,
            TITLE_HTML=Markup(title_html),
            HEAD=Markup(head),
            ATTRS=Markup(attr_html),
            # put in after rendering: through the template, the inline data (20 MB at 100k papers) is
            # copied as markup several times over
            SCRIPTS=Markup(_SCRIPTS),
            html_lang=i18n.html_lang(lang),
            nav=nav or [],
            current=current,
            home=home_url or "/",
            languages=languages or [],
            reader=signed_in_as,
            strings=Markup(_script_json(strings)) if strings else "",
        )
    )
    at = page.rindex(_SCRIPTS)
    return page[:at] + tail + page[at + len(_SCRIPTS) :]


def _no_close(js: str) -> str:
    """Inline JS must not contain "</script" (it would end the element early)."""
    return js.replace("</script", "<\\/script")
