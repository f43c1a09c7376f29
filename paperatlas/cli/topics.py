"""`paperatlas topics [build]` and `paperatlas map`."""

from __future__ import annotations

import time
from typing import Any

import click

from .common import echo_json, get_library, handle_errors, nothing_found, out
from ..i18n import LANGUAGES, language
from ..topics.layout import REDUCERS
from ..topics.pipeline import LEVELS


@click.group("topics", invoke_without_command=True)
@click.option(
    "--level",
    type=click.Choice(LEVELS),
    default="coarse",
    show_default=True,
    help="coarse: the main topics; fine: their subtopics.",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.pass_context
@handle_errors
def topics(ctx: click.Context, level: str, as_json: bool) -> None:
    """List the library's topics with their sizes and labels (build them with `topics build`).

    Example:

        paperatlas topics --level fine --json
    """
    if ctx.invoked_subcommand is not None:
        return
    lib = get_library(ctx)
    status = lib.topics.status()
    rows = lib.topics.at_level(level)
    if as_json:
        echo_json(
            {
                "level": level,
                "stale": status.get("stale", False),
                "built_at": status.get("built_at"),
                "papers": status.get("papers"),
                "topics": [t.to_dict() for t in rows],
            }
        )
    else:
        titles = {p.id: p.title for p in lib.get_many([t.central[0] for t in rows if t.central])}
        for t in rows:
            parent = f" [dim](in topic {t.parent})[/dim]" if t.parent is not None else ""
            out.print(f"{t.topic:>3}. [bold]{t.label}[/bold]  [dim]{t.size} papers[/dim]{parent}")
            if t.central:
                out.print(f"     [dim]e.g. {titles.get(t.central[0], t.central[0])}[/dim]")
        if status.get("stale"):
            click.echo("the library changed since these topics were built: run `paperatlas topics build`", err=True)
    if not rows:
        nothing_found(
            ctx,
            "no topics built yet" if not status.get("built") else "no topics at this level",
            "build them: `paperatlas topics build`"
            if lib.count()
            else "the library holds no papers: `paperatlas ingest FILE...` first",
            level=level,
        )


@topics.command("build")
@click.option("--seed", type=int, default=0, show_default=True, help="Same seed + same library = same topics.")
@click.option(
    "--layout",
    type=click.Choice(REDUCERS.names()),
    default="neighbors",
    show_default=True,
    help="2-D layout of the map.",
)
@click.option("--k", type=int, default=None, help="Force the number of topics (default: chosen by silhouette).")
@click.option("--json", "as_json", is_flag=True, help="Print the build summary as JSON.")
@click.pass_context
@handle_errors
def build(ctx: click.Context, seed: int, layout: str, k: int | None, as_json: bool) -> None:
    """Recompute topics, labels and the map layout from the library's embeddings.

    Example:

        paperatlas topics build --seed 0
    """
    lib = get_library(ctx)
    t = time.perf_counter()

    def say(step: str) -> None:
        if not as_json:
            click.echo(f"{step}...", err=True)

    model = lib.topics.build(seed=seed, layout=layout, k=k, progress=say)
    summary: dict[str, Any] = {
        "papers": len(model.ids),
        "k": model.meta["k"],
        "seconds": model.meta["seconds"],
        "total_s": round(time.perf_counter() - t, 2),
    }
    if as_json:
        echo_json(summary)
    else:
        click.echo(
            f"{summary['papers']} papers: {model.meta['k']['coarse']} topics, {model.meta['k']['fine']} "
            f"subtopics in {summary['total_s']} s"
        )


@click.command("map")
@click.option(
    "--out",
    "out_path",
    required=True,
    type=click.Path(dir_okay=False, writable=True),
    help="Write the map here (one self-contained HTML file).",
)
@click.option("--title", default=None, help="Page title (default: the library's name).")
@click.option("--reader", default=None, help="Highlight this reader's saved papers.")
@click.option("--build", "rebuild", is_flag=True, help="Build the topics first if there are none or they are stale.")
@click.option(
    "--lang",
    type=click.Choice(list(LANGUAGES)),
    default="en",
    show_default=True,
    help="Language of the page's controls and messages (topic labels come from the papers).",
)
@click.pass_context
@handle_errors
def map_cmd(ctx: click.Context, out_path: str, title: str | None, reader: str | None, rebuild: bool, lang: str) -> None:
    """Write an interactive map of every paper as one HTML file that opens offline.

    Colour by topic, labels on the map, zoom and pan, hover for titles, click to open,
    lasso or box selection, search, venue/year filters.

    Example:

        paperatlas map --out atlas.html
    """
    from pathlib import Path

    lib = get_library(ctx)
    status = lib.topics.status()
    if rebuild and (not status["built"] or status.get("stale")):
        lib.topics.build()
    with language(lang):
        n = lib.topics.write_map(out_path, title or f"{Path(lib.path).stem} · paperatlas map", reader)
    size = Path(out_path).stat().st_size
    click.echo(f"wrote {n} papers to {out_path} ({size / 1e6:.1f} MB)", err=True)


COMMANDS = [topics, map_cmd]
