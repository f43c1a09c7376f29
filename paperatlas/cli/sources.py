"""`paperatlas fetch / follow / unfollow / update`: papers from the web, and staying current.

Exit codes: 0 done (also when nothing was new: a repeat says "0 new"), 1 a source could not be
fetched (what came before the failure is stored, and a re-run resumes there), 2 usage.
`update` tries every followed source and exits 1 when any of them failed.
"""

from __future__ import annotations

from typing import Any

import click

from ..errors import PaperatlasError
from ..sources.base import SOURCES
from ..sources.openalex import FOLLOW_KINDS
from ..http_client import HttpClient
from .common import EXIT_ERROR, Fail, echo_json, get_library, handle_errors, json_option, maybe_embed

_run_options = [
    click.option(
        "--deadline",
        type=click.FloatRange(1, 3600),
        default=120.0,
        show_default=True,
        help="Seconds one request may take in all, headers and body, however slowly they arrive.",
    ),
    click.option(
        "--max-pages",
        type=click.IntRange(1),
        default=None,
        help="Pages one run fetches at most (default 1000, or $PAPERATLAS_FETCH_MAX_PAGES); "
        "the next run resumes after them.",
    ),
]


def _client_options(f: Any) -> Any:
    for opt in reversed(
        [
            click.option("--base-url", metavar="URL", help="Fetch from this mirror or proxy instead of the service."),
            click.option(
                "--timeout",
                type=click.FloatRange(0.1, 600),
                default=30.0,
                show_default=True,
                help="Seconds to wait for the server to answer or send more (connecting: 10 s at most).",
            ),
            click.option(
                "--retries",
                type=click.IntRange(0, 20),
                default=4,
                show_default=True,
                help="Retries of a failed request (429 and 503 honour Retry-After).",
            ),
            click.option(
                "--delay",
                type=click.FloatRange(0, 600),
                default=None,
                help="Seconds between two requests (default: what the service asks, e.g. 3 for arXiv).",
            ),
            *_run_options,
        ]
    ):
        f = opt(f)
    return f


def _source_options(f: Any) -> Any:
    for opt in reversed(
        [
            click.option("--all", "all_", is_flag=True, help="openreview: every submission, not only accepted papers."),
            click.option(
                "--since",
                metavar="DATE",
                help="arxiv: papers submitted on or after DATE (YYYY-MM-DD); openalex and "
                "follow author|institution: works published on or after DATE.",
            ),
            click.option("--venue", metavar="NAME", help='openalex: a venue\'s works ("CVPR", or its source id S…).'),
            click.option("--year", metavar="YEAR", help="openalex: only works published in YEAR; cvf: the year."),
            click.option("--conf", metavar="NAME", help="cvf: the conference (CVPR, ICCV, ECCV, WACV)."),
            click.option("--author", metavar="ID", help="openalex: an author's works (OpenAlex id A… or ORCID)."),
            click.option("--institution", metavar="ROR", help="openalex: an institution's works (its ROR id)."),
            click.option("--search", "search_", metavar="WORDS", help="openalex: works matching WORDS."),
            click.option(
                "--mailto",
                metavar="ADDRESS",
                help="openalex: contact address for the polite pool (default $PAPERATLAS_OPENALEX_MAILTO).",
            ),
        ]
    ):
        f = opt(f)
    return f


def _client(timeout: float, retries: int, delay: float | None, deadline: float = 120.0) -> Any:
    def make(polite: float) -> HttpClient:
        return HttpClient(
            connect_timeout=min(10.0, timeout),
            read_timeout=timeout,
            retries=retries,
            delay=polite if delay is None else delay,
            total_timeout=deadline,
        )

    return make


#: how each source is called, for the help; a source registered without an entry here is listed by name
USAGE = {
    "openreview": "openreview VENUE_ID",
    "arxiv": "arxiv CATEGORY...",
    "paperlists": "paperlists VENUE YEAR",
    "acl": "acl EVENT",
    "pmlr": "pmlr VOLUME",
    "virtual": "virtual CONF YEAR (a conference's programme: sessions, rooms, times)",
    "miniconf": "miniconf CONF YEAR [TRACK...] --base-url SITE (a Mini-Conf site)",
    "cvf": "cvf CONF YEAR (CVPR, ICCV, ECCV, WACV: PDFs and abstracts from CVF open access)",
    "openalex": "openalex --venue NAME [--year YEAR] | --author ID | --institution ROR | --search WORDS (any venue)",
}


def _sources_help() -> str:
    """Every registered source, so the help never lags behind the registry."""
    return ", ".join(USAGE.get(n, f"{n} ARGS...") for n in SOURCES.names())


@click.command("fetch", context_settings={"ignore_unknown_options": False})
@click.argument("source", metavar="SOURCE")
@click.argument("args", nargs=-1)
@_source_options
@_client_options
@click.option(
    "--years",
    metavar="YEARS",
    help="Fetch several years in one command: 2019-2025 or 2021,2023 (the year is added to the "
    "arguments, or replaces {year} in them).",
)
@click.option("--no-embed", is_flag=True, help="Do not compute embeddings after fetching.")
@json_option
@click.pass_context
@handle_errors
def fetch_cmd(
    ctx: click.Context,
    source: str,
    args: tuple[str, ...],
    all_: bool,
    since: str | None,
    venue: str | None,
    year: str | None,
    conf: str | None,
    author: str | None,
    institution: str | None,
    search_: str | None,
    mailto: str | None,
    base_url: str | None,
    timeout: float,
    retries: int,
    delay: float | None,
    deadline: float,
    max_pages: int | None,
    years: str | None,
    no_embed: bool,
    as_json: bool,
) -> None:
    """Store a venue's papers from the web (only new or changed ones; a killed fetch resumes).

    SOURCE is one of: {sources}.

    Example:

    \b
        paperatlas fetch openreview ICLR.cc/2025/Conference
        paperatlas fetch arxiv cs.LG cs.CL --since 2026-11-01
        paperatlas fetch paperlists iclr 2025 --no-embed
        paperatlas fetch paperlists nips --years 2019-2025
        paperatlas fetch openreview "ICLR.cc/{year}/Conference" --years 2023-2025
        paperatlas fetch virtual neurips 2025
        paperatlas fetch virtual neurips 2025 --base-url http://127.0.0.1:8000  # a local mirror
        paperatlas fetch openalex --venue "CVPR" --year 2025 --mailto me@example.org
        paperatlas fetch cvf --conf CVPR --year 2024
    """
    from ..sources.base import create_source

    options = {
        k: v
        for k, v in (
            ("all", all_),
            ("since", since),
            ("venue", venue),
            ("year", year),
            ("conf", conf),
            ("author", author),
            ("institution", institution),
            ("search", search_),
            ("mailto", mailto),
        )
        if v
    }
    if years:
        _fetch_years(
            ctx,
            source,
            args,
            years,
            options,
            base_url,
            _client(timeout, retries, delay, deadline),
            max_pages,
            no_embed,
            as_json,
        )
        return
    if not args and not options:
        raise click.UsageError("give the source's arguments, e.g. `fetch paperlists iclr 2025`, or --years")
    create_source(source, args, base_url, **options)  # bad arguments fail before any library file exists
    lib = get_library(ctx, create=True)
    report = lib.sources.fetch(
        source,
        args,
        base_url,
        client_factory=_client(timeout, retries, delay, deadline),
        max_pages=max_pages,
        **options,
    )
    if not as_json:
        click.echo(report.summary())
        for b in report.bad[:20]:
            click.echo(f"  skipped {b}", err=True)
    for note in report.notes:
        click.echo(f"note: {note}", err=True)
    embedded = maybe_embed(lib, no_embed, quiet=as_json)
    if as_json:
        echo_json({**report.to_dict(), "embedded": embedded})


fetch_cmd.help = (fetch_cmd.help or "").replace("{sources}", _sources_help())


def _fetch_years(
    ctx: click.Context,
    source: str,
    args: tuple[str, ...],
    years: str,
    options: dict[str, Any],
    base_url: str | None,
    factory: Any,
    max_pages: int | None,
    no_embed: bool,
    as_json: bool,
) -> None:
    """One fetch per year; a year that fails is named and the others are still fetched (exit 1)."""
    from ..report import parse_years
    from ..sources.base import create_source, year_args

    runs = year_args(args, parse_years(years))
    for a in runs:  # every year's arguments are checked before anything is fetched or created
        create_source(source, a, base_url, **options)
    lib = get_library(ctx, create=True)
    done: list[dict[str, Any]] = []
    failed = 0
    for a in runs:
        try:
            rep = lib.sources.fetch(source, a, base_url, client_factory=factory, max_pages=max_pages, **options)
        except PaperatlasError as e:
            failed += 1
            done.append({"args": a, "error": str(e)})
            click.echo(f"{source} {' '.join(a)}: failed: {e}", err=True)
            continue
        done.append({"args": a, **rep.to_dict()})
        if not as_json:
            click.echo(rep.summary())
        for note in rep.notes:
            click.echo(f"note: {note}", err=True)
    new = sum(d.get("new", 0) for d in done)
    updated = sum(d.get("updated", 0) for d in done)
    summary = f"{len(runs)} fetches, {new} new, {updated} updated" + (f", {failed} failed" if failed else "")
    embedded = maybe_embed(lib, no_embed, quiet=as_json)
    if as_json:
        echo_json(
            {
                "summary": summary,
                "new": new,
                "updated": updated,
                "failed": failed,
                "embedded": embedded,
                "fetches": done,
            }
        )
    else:
        click.echo(summary)
    if failed:
        ctx.exit(EXIT_ERROR)


@click.command("follow")
@click.argument("source", required=False)
@click.argument("args", nargs=-1)
@_source_options
@click.option("--base-url", metavar="URL", help="Fetch from this mirror or proxy instead of the service.")
@json_option
@click.pass_context
@handle_errors
def follow_cmd(
    ctx: click.Context,
    source: str | None,
    args: tuple[str, ...],
    all_: bool,
    since: str | None,
    venue: str | None,
    year: str | None,
    conf: str | None,
    author: str | None,
    institution: str | None,
    search_: str | None,
    mailto: str | None,
    base_url: str | None,
    as_json: bool,
) -> None:
    """Subscribe to a source: `paperatlas update` fetches it (with no arguments: list subscriptions).

    `follow author NAME|OPENALEX_ID|ORCID` and `follow institution NAME|ROR` follow a person or a
    place through OpenAlex: `update` brings their works published since --since (default: 90 days
    before today), and digests, their Atom feed and e-mail list them first. With no NAME: list them.

    Example:

    \b
        paperatlas follow openreview ICLR.cc/2026/Conference
        paperatlas follow arxiv cs.LG
        paperatlas follow author "Jason Priem"
        paperatlas follow institution https://ror.org/00jmfr291
        paperatlas follow
    """
    if source in FOLLOW_KINDS and source not in SOURCES.names():
        _follow_entity(ctx, source, " ".join(args), base_url, since, mailto, as_json)
        return
    if source is None:
        lib = get_library(ctx)
        rows = [
            {
                "key": f.key,
                "source": f.source,
                "args": f.args,
                "options": f.options,
                "last_run_at": f.last_run_at,
                "last_summary": f.last_summary,
                "last_error": f.last_error,
            }
            for f in lib.sources.follows()
        ]
        if as_json:
            echo_json(rows)
        elif not rows:
            click.echo("not following anything yet; e.g. `paperatlas follow arxiv cs.LG`")
        for r in rows if not as_json else []:
            last = r["last_error"] or r["last_summary"] or "not fetched yet"
            click.echo(f"{r['key']}\t{r['last_run_at'] or '-'}\t{last}")
        return
    lib = get_library(ctx, create=True)
    key, created = lib.sources.follow(
        source,
        list(args),
        base_url,
        all=all_,
        since=since,
        venue=venue,
        year=year,
        conf=conf,
        author=author,
        institution=institution,
        search=search_,
        mailto=mailto,
    )
    msg = f"following {key}" if created else f"already following {key} (options updated)"
    echo_json({"key": key, "created": created}) if as_json else click.echo(msg + "; `paperatlas update` fetches it")


def _follow_entity(
    ctx: click.Context,
    kind: str,
    query: str,
    base_url: str | None,
    since: str | None,
    mailto: str | None,
    as_json: bool,
) -> None:
    """`follow author|institution [NAME]`: follow one, or list those followed."""
    if not query.strip():
        rows = [f.to_dict() for f in get_library(ctx).sources.followed(kind)]
        if as_json:
            echo_json(rows)
        elif not rows:
            click.echo(f'not following any {kind} yet; e.g. `paperatlas follow {kind} "{EXAMPLE_FOLLOW[kind]}"`')
        for r in rows if not as_json else []:
            last = r["last_error"] or r["last_summary"] or "not fetched yet"
            click.echo(f"{r['name']}\t{r['id']}\tsince {r['since']}\t{r['last_run_at'] or '-'}\t{last}")
        return
    lib = get_library(ctx, create=True)
    got, created, note = lib.sources.follow_entity(kind, query, base_url, since=since, mailto=mailto)
    if note:
        click.echo(note, err=True)
    if as_json:
        echo_json({**got.to_dict(), "created": created, "resolved": note})
        return
    what = f"{got.name} ({got.id})" if got.name != got.id else got.id
    msg = f"following the {kind} {what}" if created else f"already following the {kind} {what}"
    click.echo(f"{msg}: `paperatlas update` fetches their works published since {got.to_dict()['since']}")


EXAMPLE_FOLLOW = {"author": "Jason Priem", "institution": "University of Michigan"}


@click.command("unfollow")
@click.argument("source")
@click.argument("args", nargs=-1)
@click.pass_context
@handle_errors
def unfollow_cmd(ctx: click.Context, source: str, args: tuple[str, ...]) -> None:
    """Stop following a source, an author or an institution (the papers it brought stay in the library).

    Example:

        paperatlas unfollow arxiv cs.LG

        paperatlas unfollow author "Jason Priem"
    """
    if source in FOLLOW_KINDS and source not in SOURCES.names():
        key = get_library(ctx).sources.unfollow_entity(source, " ".join(args))
        click.echo(f"no longer following {key}")
        return
    key = get_library(ctx).sources.unfollow(source, list(args))
    click.echo(f"no longer following {key}")


@click.command("update")
@click.option(
    "--timeout",
    type=click.FloatRange(0.1, 600),
    default=30.0,
    show_default=True,
    help="Seconds to wait for a server to answer or send more.",
)
@click.option("--retries", type=click.IntRange(0, 20), default=4, show_default=True, help="Retries per request.")
@click.option("--delay", type=click.FloatRange(0, 600), default=None, help="Seconds between two requests.")
@_run_options[0]
@_run_options[1]
@click.option("--no-embed", is_flag=True, help="Do not compute embeddings after fetching.")
@click.option("--quiet", "-q", is_flag=True, help="Print only the one-line summary (and errors).")
@json_option
@click.pass_context
@handle_errors
def update_cmd(
    ctx: click.Context,
    timeout: float,
    retries: int,
    delay: float | None,
    deadline: float,
    max_pages: int | None,
    no_embed: bool,
    quiet: bool,
    as_json: bool,
) -> None:
    """Fetch every followed source, then embed the new papers (cron-friendly).

    Prints one line per source and a one-line summary; exits 1 when any source failed (the others
    are still fetched), 0 otherwise, also when nothing was new. Digests and feeds then see the new papers.

    Example:

        paperatlas update --quiet --no-embed   # in cron: 0 * * * *
    """
    lib = get_library(ctx)
    if not lib.sources.follows():
        raise Fail(
            "not following anything: nothing to update\n"
            "Fix: subscribe first, e.g. `paperatlas follow arxiv cs.LG` or `paperatlas follow paperlists iclr 2025`"
        )
    results = lib.sources.update(_client(timeout, retries, delay, deadline), max_pages=max_pages)
    failed = [r for r in results if r.error]
    new = sum(r.report.new for r in results if r.report)
    updated = sum(r.report.updated for r in results if r.report)
    for r in results:
        if r.error:
            click.echo(f"{r.follow.key}: failed: {r.error}", err=True)
        elif not quiet and not as_json:
            click.echo(r.report.summary() if r.report else r.follow.key)
        if r.report and r.report.stopped and not as_json:
            for note in r.report.notes:
                click.echo(f"note: {note}", err=True)
    embedded = maybe_embed(lib, no_embed, quiet=quiet or as_json)
    summary = (
        f"update: {len(results)} source{'s' if len(results) != 1 else ''}, {new} new, {updated} updated"
        + (f", {len(failed)} failed" if failed else "")
        + (f", {embedded} embedded" if embedded else "")
    )
    if as_json:
        echo_json(
            {
                "summary": summary,
                "new": new,
                "updated": updated,
                "embedded": embedded,
                "sources": [
                    {"key": r.follow.key, "error": r.error, **(r.report.to_dict() if r.report else {})} for r in results
                ],
            }
        )
    else:
        click.echo(summary)
    if failed:
        ctx.exit(EXIT_ERROR)


COMMANDS = [fetch_cmd, follow_cmd, unfollow_cmd, update_cmd]
