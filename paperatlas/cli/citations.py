"""`paperatlas enrich`: each paper's OpenAlex work, citation counts and who in the library cites whom.

Exit codes: 0 done, 1 the service could not be reached (what came before is stored; a re-run
skips it), 2 usage, 4 no paper to look up.
"""

from __future__ import annotations

import click

from .. import settings

from .common import EXIT_EMPTY, Fail, echo_json, get_library, handle_errors, json_option, progress_bar
from .sources import _client


@click.command("enrich")
@click.argument("ids", nargs=-1)
@click.option(
    "--citations", is_flag=True, help="Citation counts and references (the default, and so far the only kind)."
)
@click.option("--all", "all_", is_flag=True, help="Every paper of the library.")
@click.option("--saved", is_flag=True, help="The papers the reader liked (with --reader).")
@click.option("--reader", metavar="NAME", help="Whose liked papers --saved means (default: the default reader).")
@click.option("--refresh", is_flag=True, help="Look papers up again even when their record is recent.")
@click.option(
    "--max-age",
    type=click.IntRange(0, 3650),
    default=30,
    show_default=True,
    help="Days a paper's record stays fresh: younger ones are not looked up again.",
)
@click.option("--base-url", metavar="URL", help="Ask this OpenAlex mirror or proxy instead of api.openalex.org.")
@click.option(
    "--mailto",
    metavar="ADDRESS",
    envvar=settings.env("openalex_mailto"),
    help="Contact address for OpenAlex's polite pool (or $PAPERATLAS_OPENALEX_MAILTO).",
)
@click.option(
    "--semantic-scholar",
    "s2",
    is_flag=True,
    help="Also ask Semantic Scholar (by DOI or arXiv id): TL;DR, external ids and influential citations "
    "(an API key in $PAPERATLAS_S2_API_KEY raises the public rate).",
)
@click.option("--s2-base-url", metavar="URL", help="Ask this Semantic Scholar Graph API mirror or proxy instead.")
@click.option("--timeout", type=click.FloatRange(0.1, 600), default=30.0, show_default=True, help="Seconds per read.")
@click.option("--retries", type=click.IntRange(0, 20), default=4, show_default=True, help="Retries per request.")
@click.option("--delay", type=click.FloatRange(0, 600), default=None, help="Seconds between two requests (0.2).")
@json_option
@click.pass_context
@handle_errors
def enrich_cmd(
    ctx: click.Context,
    ids: tuple[str, ...],
    citations: bool,
    all_: bool,
    saved: bool,
    reader: str | None,
    refresh: bool,
    max_age: int,
    base_url: str | None,
    mailto: str | None,
    s2: bool,
    s2_base_url: str | None,
    timeout: float,
    retries: int,
    delay: float | None,
    as_json: bool,
) -> None:
    """Look the library's papers up in OpenAlex: citation counts, references, who cites whom.

    Papers are matched by DOI, then arXiv id, then title (only a close title match in the right
    year is taken); the match and its method are stored per paper. Afterwards `show ID`, the paper
    page and `search --sort citations` read them offline.

    Example:

    \b
        paperatlas enrich --all --mailto me@example.org
        paperatlas enrich 1706.03762 h4185992fcd6e189
        paperatlas enrich --saved --reader ada
        paperatlas enrich --all --semantic-scholar
    """
    if sum(bool(x) for x in (ids, all_, saved)) != 1:
        raise click.UsageError("give paper IDS, or --all, or --saved (one of them)")
    if reader and not saved:
        raise click.UsageError("--reader goes with --saved")
    lib = get_library(ctx)
    if all_:
        wanted = None
    elif saved:
        wanted = [p.id for p in lib.readers.liked(reader)]
    else:
        wanted = [lib.get(i).id for i in ids]  # an unknown id fails here, naming it
    if wanted is not None and not wanted:
        raise Fail("no papers to look up: the reader has liked none yet", EXIT_EMPTY)
    client = _client(timeout, retries, delay)(0.2)
    with progress_bar("looking papers up in OpenAlex") as progress:
        report = lib.citations.enrich(
            wanted,
            base_url=base_url,
            client=client,
            mailto=mailto,
            refresh=refresh,
            max_age_days=max_age,
            progress=progress,
        )
    s2_report = None
    if s2:
        from ..citations.semantic_scholar import S2_DELAY

        s2_client = _client(timeout, retries, delay)(S2_DELAY)
        with progress_bar("looking papers up in Semantic Scholar") as progress:
            s2_report = lib.citations.enrich_s2(
                wanted, base_url=s2_base_url, client=s2_client, refresh=refresh, max_age_days=max_age, progress=progress
            )
    if as_json:
        echo_json({**report.to_dict(), **({"semantic_scholar": s2_report.to_dict()} if s2_report else {})})
    else:
        click.echo(report.summary())
        if s2_report is not None:
            click.echo(s2_report.summary())
    for note in report.notes + (s2_report.notes if s2_report else []):
        click.echo(f"note: {note}", err=True)


COMMANDS = [enrich_cmd]
