"""Server-rendered SVG charts: no script, no external file, so the same markup works on the web page
and in the offline HTML file. Every bar and point is a link to the papers behind it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup, escape

PALETTE = ("#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#be185d", "#4d7c0f")


def _open_svg(width: int, height: int, title: str, cls: str = "", wrap: bool = True) -> str:
    # the wrapper scrolls sideways on a phone instead of shrinking the text
    return (
        ('<div class="chart-wrap">' if wrap else "")
        + f'<svg class="chart{" " + cls if cls else ""}" viewBox="0 0 {width} {height}" width="100%" role="img"'
        f' aria-label="{escape(title)}" preserveAspectRatio="xMinYMin meet"><title>{escape(title)}</title>'
    )


NARROW_W = 360  # the phone layout of a bar chart: the label above its bar, so nothing runs off a 390 px screen


def _narrow_hbars(bars: Sequence[Bar], title: str, top: float) -> str:
    row = 34
    plot = NARROW_W - 96
    out = [_open_svg(NARROW_W, row * len(bars) + 4, title, "narrow", wrap=False)]
    for i, b in enumerate(bars):
        y = i * row + 2
        w = max(1.0, plot * b.value / top)
        label = b.label if len(b.label) <= 52 else b.label[:51] + "…"
        out.append(
            f'<a href="{escape(b.href)}"><g class="bar"><title>{escape(b.label)}: {escape(b.text)}</title>'
            f'<text x="0" y="{y + 12}" class="lbl">{escape(label)}</text>'
        )
        x = 0.0
        for v, cls in b.parts or ((b.value, "fill"),):
            pw = max(1.0, plot * v / top) if not b.parts else plot * v / top
            if pw > 0:
                out.append(f'<rect x="{x:.1f}" y="{y + 16}" width="{pw:.1f}" height="12" class="{cls}"/>')
                x += pw
        out.append(f'<text x="{w + 4:.1f}" y="{y + 26}" class="num">{escape(b.text)}</text></g></a>')
    out.append("</svg>")
    return "".join(out)


@dataclass
class Bar:
    label: str
    value: float
    href: str
    text: str  # the number as shown ("412 · 12.7%")
    parts: tuple[tuple[float, str], ...] = ()  # (value, css class) stacked segments, e.g. oral / poster


def hbars(bars: Sequence[Bar], title: str, width: int = 640, row: int = 22, label_w: int = 230) -> Markup:
    """A horizontal bar chart; labels left, numbers right of the bar, each row a link."""
    if not bars:
        return Markup("")
    top = max(b.value for b in bars) or 1.0
    plot = width - label_w - 110
    h = row * len(bars) + 6
    out = [_open_svg(width, h, title, "wide")]
    for i, b in enumerate(bars):
        y = i * row + 3
        w = max(1.0, plot * b.value / top)
        label = b.label if len(b.label) <= 34 else b.label[:33] + "…"
        out.append(
            f'<a href="{escape(b.href)}"><g class="bar"><title>{escape(b.label)}: {escape(b.text)}</title>'
            f'<text x="{label_w - 6}" y="{y + row * 0.68:.1f}" text-anchor="end" class="lbl">{escape(label)}</text>'
        )
        if b.parts:
            x = float(label_w)
            for v, cls in b.parts:
                pw = plot * v / top
                if pw > 0:
                    out.append(f'<rect x="{x:.1f}" y="{y}" width="{pw:.1f}" height="{row - 6}" class="{cls}"/>')
                    x += pw
        else:
            out.append(f'<rect x="{label_w}" y="{y}" width="{w:.1f}" height="{row - 6}" class="fill"/>')
        out.append(
            f'<text x="{label_w + w + 4:.1f}" y="{y + row * 0.68:.1f}" class="num">{escape(b.text)}</text></g></a>'
        )
    out.append("</svg>")
    out.append(_narrow_hbars(bars, title, top))
    out.append("</div>")
    return Markup("".join(out))


@dataclass
class Series:
    label: str
    values: list[float]  # one per x
    hrefs: list[str]
    texts: list[str]


def lines(xs: Sequence[str], series: Sequence[Series], title: str, width: int = 640, height: int = 260) -> Markup:
    """A line chart of shares over years; each point is a link (its papers of that year)."""
    if not series or len(xs) < 2:
        return Markup("")
    left, right, top_pad, bottom = 44, 16, 12, 28
    pw, ph = width - left - right, height - top_pad - bottom
    top = max((v for s in series for v in s.values), default=0.0) or 1.0
    top = min(1.0, top * 1.15)

    def px(i: int) -> float:
        return left + pw * i / (len(xs) - 1)

    def py(v: float) -> float:
        return top_pad + ph * (1 - v / top)

    out = [_open_svg(width, height, title)]
    for k in range(5):
        v = top * k / 4
        out.append(
            f'<line x1="{left}" x2="{width - right}" y1="{py(v):.1f}" y2="{py(v):.1f}" class="grid"/>'
            f'<text x="{left - 4}" y="{py(v) + 4:.1f}" text-anchor="end" class="axis">{v * 100:.0f}%</text>'
        )
    for i, x in enumerate(xs):
        out.append(f'<text x="{px(i):.1f}" y="{height - 8}" text-anchor="middle" class="axis">{escape(x)}</text>')
    for n, s in enumerate(series):
        color = PALETTE[n % len(PALETTE)]
        pts = " ".join(f"{px(i):.1f},{py(v):.1f}" for i, v in enumerate(s.values))
        out.append(f'<polyline points="{pts}" fill="none" stroke="{color}" stroke-width="2"/>')
        for i, v in enumerate(s.values):
            out.append(
                f'<a href="{escape(s.hrefs[i])}"><circle cx="{px(i):.1f}" cy="{py(v):.1f}" r="4.5" fill="{color}">'
                f"<title>{escape(s.label)} · {escape(xs[i])}: {escape(s.texts[i])}</title></circle></a>"
            )
    out.append("</svg></div>")
    return Markup("".join(out))


def legend(series: Sequence[Series]) -> Markup:
    # a class, not a style attribute: the site's Content-Security-Policy allows no inline style
    items = "".join(
        f'<li><span class="swatch c{n % len(PALETTE)}"></span>{escape(s.label)}</li>' for n, s in enumerate(series)
    )
    return Markup(f'<ul class="legend">{items}</ul>')
